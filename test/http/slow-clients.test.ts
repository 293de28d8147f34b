/**
 * Slow clients are cut off (docs/reference.md "Limits"): the headers must be in within
 * REQUEST_HEADERS_TIMEOUT_MS (default 10 s) and the whole request within REQUEST_TIMEOUT_MS
 * (default 30 s), else 408 and the connection closes — never a 500, never an error line. The test
 * sets them small (0.5 s and 1.5 s) and trickles real sockets a byte at a time.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Agent, agentHeaders, provisionAgent } from '../support/agent.ts';
import { startServer, type TestServer } from '../support/server.ts';

const HEADERS_MS = 500;
const REQUEST_MS = 1_500;
/** How long past its limit a cut may come on a loaded machine before the test calls it missing. */
const SLACK_MS = 4_000;

interface Trickled {
  /** What the server sent before it closed (or before the test gave up). */
  answer: string;
  /** Milliseconds from the first byte to the close; undefined when the socket was still open. */
  closedAfterMs: number | undefined;
}

/** Writes `head` at once, then one byte of `drip` every `everyMs`, until the server closes or `giveUpMs`. */
function trickle(
  baseUrl: string,
  head: string,
  drip: string,
  everyMs: number,
  giveUpMs: number,
): Promise<Trickled> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const started = Date.now();
    let answer = '';
    let sent = 0;
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
    });
    socket.on('error', () => {});
    const timer = setInterval(() => {
      if (sent < drip.length) socket.write(drip[sent++] as string);
    }, everyMs);
    const giveUp = setTimeout(() => {
      socket.removeAllListeners('close');
      clearInterval(timer);
      socket.destroy();
      resolve({ answer, closedAfterMs: undefined });
    }, giveUpMs);
    socket.on('close', () => {
      clearInterval(timer);
      clearTimeout(giveUp);
      resolve({ answer, closedAfterMs: Date.now() - started });
    });
    socket.write(head);
  });
}

const TIMED_OUT = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n';

describe('slow clients', () => {
  let server: TestServer;
  let agent: Agent;

  beforeAll(async () => {
    server = await startServer('pglite', {
      env: { REQUEST_HEADERS_TIMEOUT_MS: String(HEADERS_MS), REQUEST_TIMEOUT_MS: String(REQUEST_MS) },
    });
    agent = await provisionAgent(server, ['tools:execute']);
  });
  afterAll(async () => {
    await server?.close();
  });

  const host = () => new URL(server.url).host;

  it('cuts off headers that trickle past REQUEST_HEADERS_TIMEOUT_MS with 408', async () => {
    const headers = 'x-slow: '.padEnd(400, 'a');
    const cut = await trickle(
      server.url,
      `GET /healthz HTTP/1.1\r\nhost: ${host()}\r\n`,
      headers,
      50,
      HEADERS_MS + SLACK_MS,
    );
    expect(cut.answer).toBe(TIMED_OUT);
    expect(cut.closedAfterMs).toBeGreaterThanOrEqual(HEADERS_MS - 50);
    expect(cut.closedAfterMs).toBeLessThan(HEADERS_MS + SLACK_MS);
  }, 30_000);

  it('cuts off 50 bodies that trickle past REQUEST_TIMEOUT_MS with 408, and logs no error', async () => {
    const head =
      `POST /proxyV2 HTTP/1.1\r\nhost: ${host()}\r\ncontent-type: application/json\r\ncontent-length: 200\r\n` +
      `authorization: Bearer nothing-yet\r\nx-service-client-id: none\r\n\r\n`;
    const cuts = await Promise.all(
      Array.from({ length: 50 }, () =>
        trickle(server.url, head, '{"toolId":"a:::b"'.padEnd(200, ' '), 100, REQUEST_MS + SLACK_MS),
      ),
    );
    for (const cut of cuts) {
      expect(cut.answer).toBe(TIMED_OUT);
      expect(cut.closedAfterMs).toBeGreaterThanOrEqual(REQUEST_MS - 50);
      expect(cut.closedAfterMs).toBeLessThan(REQUEST_MS + SLACK_MS);
    }
    // The routes saw their clients go: info lines of 499, never an error (issue 23, item 4).
    const lines = () =>
      server.logs.flatMap((chunk) => chunk.split('\n').filter(Boolean)).map((line) => JSON.parse(line));
    await expect
      .poll(() => lines().filter((line) => line.msg === 'request' && line.path === '/proxyV2').length, {
        timeout: 10_000,
      })
      .toBe(50);
    expect(
      lines()
        .filter((line) => line.path === '/proxyV2')
        .map((line) => [line.level, line.status]),
    ).toEqual(Array(50).fill([30, 499]));
    expect(lines().filter((line) => line.level >= 50)).toEqual([]);
  }, 60_000);

  it('lets a slow but timely request through', async () => {
    const body = JSON.stringify({ toolId: 'none:::nothing', parameters: {} });
    const headers = Object.entries(agentHeaders(agent))
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    const head =
      `POST /proxyV2 HTTP/1.1\r\nhost: ${host()}\r\nconnection: close\r\ncontent-type: application/json\r\n` +
      `content-length: ${body.length}\r\n${headers}\r\n`;
    // The body in about half the request time.
    const done = await trickle(
      server.url,
      head,
      body,
      Math.floor(REQUEST_MS / 2 / body.length),
      REQUEST_MS + SLACK_MS,
    );
    expect(done.answer.split('\r\n')[0]).toBe('HTTP/1.1 404 Not Found');
    expect(JSON.parse(done.answer.slice(done.answer.indexOf('\r\n\r\n') + 4))).toEqual({
      ok: false,
      error: 'tool_not_found',
      message: expect.any(String),
      tool_id: 'none:::nothing',
    });
  }, 30_000);

  it('defaults to 10 s for the headers and 30 s for the whole request', async () => {
    const plain = await startServer('pglite');
    try {
      expect([plain.app.server.headersTimeout, plain.app.server.requestTimeout]).toEqual([10_000, 30_000]);
    } finally {
      await plain.close();
    }
  }, 60_000);
});
