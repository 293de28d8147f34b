/**
 * Requests dispatched straight into a server's request listener, without a socket (Fastify's
 * `inject`, through its own library light-my-request): what a routing or core test sends and
 * reads is the same as over loopback — status, headers, body — but no connection is opened, so
 * a file of many small requests spends its time in the server, not in the network stack.
 *
 * Use `call` (server.ts) instead where the socket itself is under test: timeouts, slow or cut
 * bodies, keep-alive, Host and Origin as a client really sends them, streaming answers.
 */
import type { Server } from 'node:http';
import { inject as dispatch } from 'light-my-request';
import { ToolgateResponse } from '../../server/http/response.ts';
import { type CallOptions, type Reply, requestParts, type TestServer } from './server.ts';

type Listener = Parameters<typeof dispatch>[0];

/**
 * The server's request listener (createHttpServer registers exactly one), answering into
 * light-my-request's response as into the server's own: the server's response class adds
 * X-Request-Id in its `writeHead`, which the injected response takes over (light-my-request
 * reads the headers when the answer ends).
 */
function listenerOf(server: Server): Listener {
  const [listener] = server.listeners('request');
  if (!listener) throw new Error('inject: the server has no request listener');
  return (req, res) => {
    res.writeHead = ToolgateResponse.prototype.writeHead;
    (listener as Listener)(req, res);
  };
}

/**
 * One request through the listener of `server`, answering as `call` does (status, headers, the
 * parsed body and the text). `options.redirect` does not apply: an injected request is answered
 * as the server answers it, a redirect included.
 */
export async function inject(
  server: TestServer,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<Reply> {
  const { headers, body: payload } = requestParts(options);
  headers.host ??= new URL(server.url).host;
  const response = await dispatch(listenerOf(server.app.server), {
    method: method as 'GET',
    url: path,
    headers,
    payload,
    remoteAddress: '127.0.0.1',
  });
  const answered = new Headers();
  for (const [name, value] of Object.entries(response.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) answered.append(name, String(one));
  }
  let parsed: unknown = response.payload;
  try {
    parsed = response.payload ? JSON.parse(response.payload) : undefined;
  } catch {}
  return { status: response.statusCode, headers: answered, body: parsed, text: response.payload };
}
