/**
 * Bench child process: a bare pass-through proxy, the ceiling of a Node proxy on this machine.
 * Forwards method, path and query to the upstream and answers its status, content type and body,
 * with no checks at all. `argv[2]` = upstream origin, `argv[3]` = `undici` (an undici Pool and
 * `request`, default) or `fetch` (the global fetch, which ky wraps).
 * Reports `{ url }` to its parent over IPC; exits when the parent disconnects or sends `stop`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

const upstream = process.argv[2];
const mode = process.argv[3] ?? 'undici';
if (!upstream || (mode !== 'undici' && mode !== 'fetch')) {
  process.stderr.write('usage: bare-proxy.ts <upstream origin> [undici|fetch]\n');
  process.exit(2);
}

const pool = new Pool(upstream, { connections: 64, pipelining: 1 });

function answer(res: ServerResponse, status: number, contentType: string, body: Buffer): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': body.length });
  res.end(body);
}

async function viaUndici(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const reply = await pool.request({
    origin: upstream,
    path: req.url ?? '/',
    method: (req.method ?? 'GET') as 'GET',
    headers: { accept: 'application/json' },
  });
  const body = Buffer.from(await reply.body.arrayBuffer());
  const contentType = reply.headers['content-type'];
  answer(res, reply.statusCode, typeof contentType === 'string' ? contentType : 'application/json', body);
}

async function viaFetch(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const reply = await fetch(`${upstream}${req.url ?? '/'}`, {
    method: req.method ?? 'GET',
    headers: { accept: 'application/json' },
    redirect: 'manual',
  });
  const body = Buffer.from(await reply.arrayBuffer());
  answer(res, reply.status, reply.headers.get('content-type') ?? 'application/json', body);
}

const forward = mode === 'fetch' ? viaFetch : viaUndici;

const server = createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
  req.resume();
  forward(req, res).catch(() => {
    if (!res.headersSent) answer(res, 502, 'application/json', Buffer.from('{"error":"bad_gateway"}'));
    else res.destroy();
  });
});

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.send?.({ ready: true, url: `http://127.0.0.1:${port}` });
});

const stop = () => {
  server.close(() => {
    void pool.close().finally(() => process.exit(0));
  });
  server.closeAllConnections();
  setTimeout(() => process.exit(0), 2_000).unref();
};
process.on('message', (message) => {
  if (message === 'stop') stop();
});
process.on('disconnect', stop);
process.on('SIGTERM', stop);
