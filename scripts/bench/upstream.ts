/**
 * Bench child process: the upstream API on 127.0.0.1:<free port>. Answers `GET /items/{itemId}`
 * with a small JSON body, `POST /token` as a tiny OAuth token endpoint (any code → a token valid for
 * a day, so the bench's oauth2 app gets a warm, valid grant), 404 for anything else. Reports `{ url }` to its parent over IPC and exits
 * when the parent disconnects or sends `stop`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { itemBody } from './fixture.ts';

const ITEM = /^\/items\/([^/?]+)$/;

const server = createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
  if (req.method === 'POST' && req.url === '/token') {
    const payload = JSON.stringify({
      access_token: `bench-access-${Date.now()}`,
      token_type: 'Bearer',
      expires_in: 86_400,
      refresh_token: 'bench-refresh',
      scope: 'items:read',
    });
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
    res.end(payload);
    return;
  }
  const match = req.method === 'GET' ? ITEM.exec(req.url ?? '') : null;
  const payload = match
    ? JSON.stringify(itemBody(decodeURIComponent(match[1] as string)))
    : JSON.stringify({ error: 'not_found' });
  res.writeHead(match ? 200 : 404, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
  });
  res.end(payload);
  req.resume();
});

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.send?.({ ready: true, url: `http://127.0.0.1:${port}` });
});

const stop = () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
  setTimeout(() => process.exit(0), 2_000).unref();
};
process.on('message', (message) => {
  if (message === 'stop') stop();
});
process.on('disconnect', stop);
process.on('SIGTERM', stop);
