/**
 * The agent's redirect URI: a tiny local HTTP server where toolgate sends the user's browser after
 * the OAuth callback (`?status=success` or `?status=error&reason=…`). It records each arrival and
 * answers a short page, as an agent's own web endpoint would.
 *
 * @example
 * const receiver = await startRedirectReceiver();
 * // register receiver.url on the client, run the flow …
 * const arrival = await receiver.next();
 * console.log(arrival.get('status')); // 'success'
 * await receiver.close();
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RedirectReceiver {
  /** The URI to register on the client (`http://127.0.0.1:<port>/oauth/done`). */
  url: string;
  /** The query of every arrival so far, in order. */
  arrivals: URLSearchParams[];
  /** The next arrival (or the oldest one not yet taken). */
  next(): Promise<URLSearchParams>;
  close(): Promise<void>;
}

export async function startRedirectReceiver(path = '/oauth/done'): Promise<RedirectReceiver> {
  const arrivals: URLSearchParams[] = [];
  let taken = 0;
  const waiting: Array<(query: URLSearchParams) => void> = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://receiver');
    if (url.pathname !== path) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
      return;
    }
    arrivals.push(url.searchParams);
    const waiter = waiting.shift();
    if (waiter) {
      taken += 1;
      waiter(url.searchParams);
    }
    const ok = url.searchParams.get('status') === 'success';
    res
      .writeHead(200, { 'content-type': 'text/plain; charset=utf-8' })
      .end(ok ? 'Connected. You can close this window.' : `Not connected: ${url.searchParams.get('reason')}`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    arrivals,
    next: () => {
      const ready = arrivals[taken];
      if (ready) {
        taken += 1;
        return Promise.resolve(ready);
      }
      return new Promise((resolve) => waiting.push(resolve));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
