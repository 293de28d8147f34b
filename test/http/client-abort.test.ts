/**
 * A client that went away is routine, not a failure of ours (docs/reference.md "Logs and metrics"):
 * a POST whose body is cut off (Content-Length: 100, one byte sent, socket closed) leaves one info
 * request line with status 499 and counts status="499" in toolgate_http_requests_total — no error
 * line, no stack, no 5xx. Real sockets against a real server, on every route that reads a body.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Agent, agentHeaders, provisionAgent } from '../support/agent.ts';
import { call, startServer, type TestServer } from '../support/server.ts';

/** Sends the head of a POST announcing 100 bytes, one byte of its body, and closes the socket. */
function cutOff(
  baseUrl: string,
  path: string,
  headers: Record<string, string>,
  requestId: string,
): Promise<void> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      const lines = Object.entries({
        host: `${hostname}:${port}`,
        'content-type': 'application/json',
        'content-length': '100',
        'x-request-id': requestId,
        ...headers,
      }).map(([name, value]) => `${name}: ${value}`);
      socket.write(`POST ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n{`, () => socket.destroy());
    });
    socket.on('error', reject);
    socket.on('close', () => resolve());
  });
}

interface LogLine {
  level: number;
  msg: string;
  requestId?: string;
  status?: number;
  path?: string;
}

describe('a client that goes away mid-request', () => {
  let server: TestServer;
  let agent: Agent;

  beforeAll(async () => {
    server = await startServer('pglite');
    agent = await provisionAgent(server, ['tools:execute', 'oauth:initiate']);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('is an info line with status 499 and counts 499, never an error or a 500', async () => {
    const headers = agentHeaders(agent, 'u1');
    const admin = { authorization: `Bearer ${server.adminKey}` };
    const routes: Array<[string, Record<string, string>, string]> = [
      ['/proxyV2', headers, '/proxyV2'],
      ['/initiateOAuth', headers, '/initiateOAuth'],
      ['/mcp', headers, '/mcp'],
      ['/trpc/oauth.initiate', headers, '/trpc/{procedure}'],
      ['/admin/clients', admin, '/admin/clients'],
    ];
    const ids: string[] = [];
    for (const [path, routeHeaders] of routes) {
      for (let i = 0; i < 20; i += 1) {
        const id = `gone-${path.replaceAll('/', '_')}-${i}`;
        ids.push(id);
        await cutOff(server.url, path, routeHeaders, id);
      }
    }
    const lines = () =>
      server.logs
        .flatMap((chunk) => chunk.split('\n').filter(Boolean))
        .map((line) => JSON.parse(line) as LogLine);
    await expect
      .poll(() => lines().filter((line) => ids.includes(line.requestId ?? '')).length, { timeout: 30_000 })
      .toBe(ids.length);

    const ours = lines().filter((line) => ids.includes(line.requestId ?? ''));
    expect(ours.map(({ level, msg, status }) => ({ level, msg, status }))).toEqual(
      ids.map(() => ({ level: 30, msg: 'request', status: 499 })),
    );
    expect(lines().filter((line) => line.level >= 50)).toEqual([]);

    const metrics = await call(server.url, 'GET', '/metrics');
    const series = (metrics.text as string)
      .split('\n')
      .filter((line) => line.startsWith('toolgate_http_requests_total{') && line.includes('method="POST"'));
    for (const [, , template] of routes) {
      expect(series).toContain(
        `toolgate_http_requests_total{route="${template}",method="POST",status="499"} 20`,
      );
    }
    expect(series.filter((line) => /status="5\d\d"/.test(line))).toEqual([]);
  }, 120_000);
});
