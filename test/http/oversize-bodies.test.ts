/**
 * A body over MAX_BODY_BYTES gets its 413 (docs/reference.md "Limits"), and the client reads it: the
 * server drains what the client is still sending (up to a bound), so the client never meets a
 * closed socket (EPIPE, ECONNRESET) instead of the answer; past the bound it closes. Every route.
 *
 * The client is a raw socket, as a fuzzer's or another language's HTTP client: Node's own client
 * hides a write that fails after the answer came, where others report the failure instead of it.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../server/config.ts';
import { type Agent, agentHeaders, provisionAgent } from '../support/agent.ts';
import { startServer, type TestServer } from '../support/server.ts';

const LIMIT = 1_048_576;
/** The attack run's size: 1.2 MB, a fifth over the default limit. */
const BODY = Buffer.alloc(1_200_000, 'a');
const CHUNK = 64 * 1024;

interface Outcome {
  status?: number;
  body?: unknown;
  /** A socket error (EPIPE, ECONNRESET…) met before the body was sent and the answer read. */
  error?: string;
}

/** Status and JSON body of the first answer in what a socket received. */
function parseAnswer(raw: Buffer): { status: number; body: unknown } | undefined {
  const text = raw.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const head = text.slice(0, end);
  const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? Number.NaN);
  const rest = raw.subarray(end + 4);
  if (!(rest.length >= length)) return undefined;
  const bodyText = rest.subarray(0, length).toString('utf8');
  let body: unknown = bodyText;
  try {
    body = JSON.parse(bodyText);
  } catch {}
  return { status: Number(head.split(' ')[1]), body };
}

/**
 * One request on a fresh connection with a 1.2 MB body in 64 KiB chunks, a chunk per turn of the
 * event loop, as a client that does not look at the answer before it has sent everything: it is
 * still sending when an early answer comes. It succeeds when the whole body went out and the answer
 * was read; any socket error on the way is its outcome.
 */
function send(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
): Promise<Outcome> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const received: Buffer[] = [];
    let failed: string | undefined;
    let sent = false;
    let settled = false;
    const settle = () => {
      if (settled) return;
      const answer = parseAnswer(Buffer.concat(received));
      if (failed) resolve({ error: failed });
      else if (answer && sent) resolve(answer);
      else return;
      settled = true;
      socket.destroy();
    };
    socket.on('data', (chunk: Buffer) => {
      received.push(chunk);
      settle();
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      failed ??= error.code ?? error.message;
      settle();
    });
    socket.on('close', () => {
      failed ??= sent ? 'closed before the answer' : 'closed while sending';
      settle();
    });
    const lines = Object.entries({
      host: `${hostname}:${port}`,
      'content-type': 'application/json',
      'content-length': String(BODY.length),
      ...headers,
    }).map(([name, value]) => `${name}: ${value}`);
    socket.write(`${method} ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`);
    let offset = 0;
    const pump = () => {
      if (failed || settled) return;
      const chunk = BODY.subarray(offset, offset + CHUNK);
      offset += chunk.length;
      if (offset >= BODY.length) {
        socket.write(chunk, () => {
          sent = true;
          settle();
        });
        return;
      }
      if (socket.write(chunk)) setImmediate(pump);
      else socket.once('drain', pump);
    };
    pump();
  });
}

const TOO_LARGE = {
  ok: false,
  error: 'payload_too_large',
  message: `The body is larger than ${LIMIT} bytes.`,
  limit: LIMIT,
};

describe('over-limit bodies', () => {
  let server: TestServer;
  let agent: Agent;

  beforeAll(async () => {
    server = await startServer('pglite');
    agent = await provisionAgent(server, ['tools:execute', 'oauth:initiate', 'connections:read']);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers 413 to 1.2 MB bodies on /proxyV2 and /initiateOAuth, read by every client: no EPIPE', async () => {
    const routes = ['/proxyV2', '/initiateOAuth'];
    const tally: Record<string, number> = {};
    // 150 requests per route, 10 at a time.
    for (let round = 0; round < 15; round += 1) {
      const batch = routes.flatMap((path) =>
        Array.from({ length: 5 }, async () => {
          const { status, body, error } = await send(server.url, 'POST', path, agentHeaders(agent, 'u1'));
          const what = error ?? (status === 413 ? JSON.stringify(body) : `${status} ${JSON.stringify(body)}`);
          tally[`${path} ${what}`] = (tally[`${path} ${what}`] ?? 0) + 1;
        }),
      );
      await Promise.all(batch);
    }
    expect(tally).toEqual({
      [`/proxyV2 ${JSON.stringify(TOO_LARGE)}`]: 75,
      [`/initiateOAuth ${JSON.stringify(TOO_LARGE)}`]: 75,
    });
  }, 240_000);

  it('lets the client finish sending on every route, and answers each as it would', async () => {
    const headers = agentHeaders(agent, 'u1');
    const admin = { authorization: `Bearer ${server.adminKey}` };
    const cases: Array<[string, string, Record<string, string>, number]> = [
      ['POST', '/mcp', headers, 413],
      ['POST', '/trpc/oauth.initiate', headers, 413],
      ['POST', '/admin/clients', admin, 413],
      ['DELETE', '/connections/demo', headers, 403],
      ['GET', '/healthz', {}, 200],
      ['POST', '/healthz', {}, 405],
      ['POST', '/no/such/path', {}, 404],
      ['GET', '/handleOAuthCallback?state=x', {}, 400],
      ['POST', '/proxyV2', { ...headers, 'content-type': 'text/plain' }, 415],
    ];
    const seen: Record<string, Array<number | string | undefined>> = {};
    const wanted: Record<string, number[]> = {};
    for (const [method, path, caseHeaders, status] of cases) {
      const all = await Promise.all(
        Array.from({ length: 6 }, () => send(server.url, method, path, caseHeaders)),
      );
      seen[`${method} ${path}`] = all.map((o) => o.status ?? o.error);
      wanted[`${method} ${path}`] = Array(6).fill(status);
    }
    expect(seen).toEqual(wanted);
  }, 240_000);

  it('closes the connection once a refused body runs past the drain bound', async () => {
    const { hostname, port } = new URL(server.url);
    const socket = connect(Number(port), hostname);
    socket.on('error', () => {});
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write(
      `POST /proxyV2 HTTP/1.1\r\nhost: ${hostname}:${port}\r\ncontent-type: application/json\r\n` +
        'transfer-encoding: chunked\r\n\r\n',
    );
    // An endless chunked body: the server must stop reading it, not drain it for ever.
    const chunk = Buffer.concat([
      Buffer.from(`${(CHUNK).toString(16)}\r\n`),
      BODY.subarray(0, CHUNK),
      Buffer.from('\r\n'),
    ]);
    let written = 0;
    let open = true;
    let wake = () => {};
    socket.on('drain', () => wake());
    void closed.then(() => {
      open = false;
      wake();
    });
    while (open && written < 4 * LIMITS.drainBytes) {
      written += CHUNK;
      if (!socket.write(chunk))
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
    }
    await closed;
    expect(parseAnswer(Buffer.concat(received))).toEqual({ status: 413, body: TOO_LARGE });
    expect(written).toBeGreaterThan(LIMIT + LIMITS.drainBytes - 8 * CHUNK);
    expect(written).toBeLessThan(2 * LIMITS.drainBytes);
  }, 120_000);
});
