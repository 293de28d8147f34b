/**
 * A real upstream API for tests: a node:http server on 127.0.0.1 that records every request it
 * receives and serves the operations of `upstream-openapi.ts`. A second server on another port
 * plays "another origin" (the target of the cross-origin redirect) and records its requests too.
 *
 * Routes (below the optional `basePath`):
 * - `GET /items`, `GET /echo`, `GET /orgs/{org}/repos` — 200 JSON echo of the request (`Echo` below)
 * - `POST /items` — 201 `{ id, title, labels }` from the JSON body (400 on a body that is not JSON)
 * - `GET /items/{itemId}` — 200 `{ id, title }`; `DELETE /items/{itemId}` — 204, empty
 * - `GET /text` — 200 text/plain `hello, world`; `GET /image` — 200 image/png (`PNG_1X1`)
 * - `GET /status/{code}?size=` — that status; JSON `{ error, code }`, or `size` bytes of text/plain
 * - `GET /slow?ms=` — 200 `{ sleptMs }` after `ms` milliseconds
 * - `GET /redirect/same` — 302 to `/echo` on this origin (`?status=` picks 301/302/303/307/308)
 * - `GET /redirect/cross` — 302 to `<other>/landing`, another origin
 * - `GET /secure/header-key` — needs `X-Api-Key: <apiKey>`; `GET /secure/query-key` needs `?api_key=<apiKey>`
 * - `GET /me` — needs `Authorization: Bearer <token>` accepted by the token check (`setAccessToken`,
 *   `setTokenCheck`); answers the token's holder when the check names one (`TokenCheck`);
 *   `POST /me/notes` likewise; otherwise 401 with `WWW-Authenticate: Bearer error="invalid_token"`
 * - anything else — 404 JSON
 *
 * @example
 * const upstream = await startUpstream({ basePath: '/v1' });
 * upstream.setAccessToken('t0k3n');
 * await fetch(`${upstream.url}/me`, { headers: { authorization: 'Bearer t0k3n' } });
 * expect(upstream.requests.at(-1)?.path).toBe('/v1/me');
 * await upstream.close();
 */
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { createUpstreamOpenApi, createUpstreamOpenApi30 } from './upstream-openapi.ts';

export interface RecordedRequest {
  method: string;
  /** The raw request target, exactly as received (path and query, still percent-encoded). */
  url: string;
  /** The raw path part of `url` (with the base path). */
  path: string;
  /** The raw query string without `?` (`''` when none). */
  query: string;
  /** Node's parsed headers: lower-case names, repeated headers joined. */
  headers: IncomingHttpHeaders;
  /** Names and values as received, alternating. */
  rawHeaders: string[];
  /** The body as UTF-8 text (`''` when none). */
  body: string;
  bodyBytes: Buffer;
}

/** What the echo routes answer. */
export interface Echo {
  method: string;
  url: string;
  path: string;
  query: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * Whether `/me` accepts a bearer token: `true`, or the account it was issued for, so that `/me`
 * answers that account's profile (`{ id: <account>, name: <Account> }`) instead of the one fixed
 * profile `{ id: 'user-1', name: 'Ada' }`.
 */
export type TokenCheck = (
  token: string,
) => boolean | { account: string } | Promise<boolean | { account: string }>;

export interface UpstreamOptions {
  /** Path prefix of every route, e.g. `/v1` (default none). */
  basePath?: string;
  /** The key `/secure/*` accept (default `test-upstream-api-key`). */
  apiKey?: string;
  /** The bearer token `/me` accepts (default none: every token is refused until one is set). */
  accessToken?: string;
}

export interface Upstream {
  /** Base URL of the API (origin + base path, no trailing slash): an app registration's `baseUrl`. */
  url: string;
  origin: string;
  /** OpenAPI 3.1 document of the routes, `servers[0].url` = `url`. */
  openapi: Record<string, unknown>;
  /** OpenAPI 3.0 variant of a few routes. */
  openapi30: Record<string, unknown>;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** The other origin the cross-origin redirect points to. */
  other: { url: string; requests: RecordedRequest[] };
  apiKey: string;
  setApiKey(key: string): void;
  /** The one bearer token `/me` accepts from now on (null: none). */
  setAccessToken(token: string | null): void;
  /** Replaces the token check, e.g. to accept the tokens of an OAuth provider fixture. */
  setTokenCheck(check: TokenCheck): void;
  /** Forgets the recorded requests (of both origins). */
  reset(): void;
  close(): Promise<void>;
}

/** A valid 1×1 transparent PNG. */
export const PNG_1X1 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

/** How many requests `upstream` received on `path` (and with exactly `query`, when given). */
export function hits(upstream: Pick<Upstream, 'requests'>, path: string, query?: string): number {
  return upstream.requests.filter((r) => r.path === path && (query === undefined || r.query === query))
    .length;
}

export async function startUpstream(options: UpstreamOptions = {}): Promise<Upstream> {
  const basePath = (options.basePath ?? '').replace(/\/+$/, '');
  let apiKey = options.apiKey ?? 'test-upstream-api-key';
  let accessToken: string | null = options.accessToken ?? null;
  let tokenCheck: TokenCheck = (token) => accessToken !== null && token === accessToken;

  const requests: RecordedRequest[] = [];
  const otherRequests: RecordedRequest[] = [];

  const other = await listen(async (req, res) => {
    otherRequests.push(await record(req));
    sendJson(res, 200, { origin: 'other', path: req.url });
  });
  const otherUrl = `http://127.0.0.1:${other.port}`;

  const main = await listen(async (req, res) => {
    const recorded = await record(req);
    requests.push(recorded);
    if (!recorded.path.startsWith(`${basePath}/`)) return sendJson(res, 404, { error: 'not_found' });
    const route = recorded.path.slice(basePath.length);
    const search = new URLSearchParams(recorded.query);
    const echo: Echo = {
      method: recorded.method,
      url: recorded.url,
      path: recorded.path,
      query: recorded.query,
      headers: recorded.headers,
      body: recorded.body,
    };
    const get = recorded.method === 'GET';
    const itemMatch = /^\/items\/([^/]+)$/.exec(route);
    const statusMatch = /^\/status\/(\d{3})$/.exec(route);

    if (get && ['/items', '/echo'].includes(route)) return sendJson(res, 200, echo);
    if (get && /^\/orgs\/[^/]+\/repos$/.test(route)) return sendJson(res, 200, echo);
    if (recorded.method === 'POST' && route === '/items') {
      const item = parseJson(recorded.body);
      if (typeof item !== 'object' || item === null)
        return sendJson(res, 400, { error: 'body must be JSON' });
      return sendJson(res, 201, { id: 'item-1', ...item });
    }
    if (itemMatch) {
      if (get) return sendJson(res, 200, { id: decodeURIComponent(itemMatch[1] ?? ''), title: 'An item' });
      if (recorded.method === 'DELETE') return send(res, 204, {}, '');
    }
    if (get && route === '/text')
      return send(res, 200, { 'content-type': 'text/plain; charset=utf-8' }, 'hello, world');
    if (get && route === '/image') return send(res, 200, { 'content-type': 'image/png' }, PNG_1X1);
    if (get && statusMatch) {
      const code = Number(statusMatch[1]);
      const size = search.get('size');
      if (size !== null) return send(res, code, { 'content-type': 'text/plain' }, 'x'.repeat(Number(size)));
      return sendJson(res, code, { error: `status ${code}`, code });
    }
    if (get && route === '/slow') {
      const ms = Number(search.get('ms') ?? 0);
      const timer = setTimeout(() => sendJson(res, 200, { sleptMs: ms }), ms);
      res.on('close', () => clearTimeout(timer));
      return;
    }
    if (get && route === '/redirect/same') {
      const status = Number(search.get('status') ?? 302);
      return send(res, status, { location: `${basePath}/echo?redirected=1` }, '');
    }
    if (get && route === '/redirect/cross') return send(res, 302, { location: `${otherUrl}/landing` }, '');
    if (get && route === '/secure/header-key') {
      if (recorded.headers['x-api-key'] !== apiKey) return sendJson(res, 401, { error: 'bad api key' });
      return sendJson(res, 200, echo);
    }
    if (get && route === '/secure/query-key') {
      if (search.get('api_key') !== apiKey) return sendJson(res, 401, { error: 'bad api key' });
      return sendJson(res, 200, echo);
    }
    if (route === '/me' || route === '/me/notes') {
      const token = /^Bearer (.+)$/.exec(recorded.headers.authorization ?? '')?.[1];
      const holder = token === undefined ? false : await tokenCheck(token);
      if (!holder) {
        return send(
          res,
          401,
          { 'content-type': 'application/json', 'www-authenticate': 'Bearer error="invalid_token"' },
          JSON.stringify({ error: 'invalid_token' }),
        );
      }
      if (get && route === '/me') {
        if (holder === true) return sendJson(res, 200, { id: 'user-1', name: 'Ada' });
        const { account } = holder;
        return sendJson(res, 200, { id: account, name: account.charAt(0).toUpperCase() + account.slice(1) });
      }
      if (recorded.method === 'POST' && route === '/me/notes') {
        return sendJson(res, 201, { id: 'note-1', ...(parseJson(recorded.body) as object) });
      }
    }
    return sendJson(res, 404, { error: 'not_found' });
  });

  const origin = `http://127.0.0.1:${main.port}`;
  const url = `${origin}${basePath}`;
  return {
    url,
    origin,
    openapi: createUpstreamOpenApi(url),
    openapi30: createUpstreamOpenApi30(url),
    requests,
    other: { url: otherUrl, requests: otherRequests },
    get apiKey() {
      return apiKey;
    },
    setApiKey: (key) => {
      apiKey = key;
    },
    setAccessToken: (token) => {
      accessToken = token;
    },
    setTokenCheck: (check) => {
      tokenCheck = check;
    },
    reset: () => {
      requests.length = 0;
      otherRequests.length = 0;
    },
    close: async () => {
      await Promise.all([main.close(), other.close()]);
    },
  };
}

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;

async function listen(handler: Handler): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    Promise.resolve(handler(req, res)).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: String(error) });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Open keep-alive or slow requests must not hold the test up.
        server.closeAllConnections();
      }),
  };
}

async function record(req: IncomingMessage): Promise<RecordedRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const bodyBytes = Buffer.concat(chunks);
  const url = req.url ?? '';
  const queryAt = url.indexOf('?');
  return {
    method: req.method ?? '',
    url,
    path: queryAt === -1 ? url : url.slice(0, queryAt),
    query: queryAt === -1 ? '' : url.slice(queryAt + 1),
    headers: req.headers,
    rawHeaders: req.rawHeaders,
    body: bodyBytes.toString('utf8'),
    bodyBytes,
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function send(
  res: ServerResponse,
  status: number,
  headers: Record<string, string>,
  body: string | Buffer,
): void {
  res.writeHead(status, { ...headers, 'content-length': String(Buffer.byteLength(body)) });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, { 'content-type': 'application/json' }, JSON.stringify(value));
}
