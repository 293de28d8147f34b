import type { IncomingMessage, ServerResponse } from 'node:http';
import { apiError } from '../../shared/errors.ts';
import { SCOPE } from '../auth/scopes.ts';
import { LIMITS } from '../config.ts';
import { consoleFiles } from '../console/assets.ts';
import { CSRF_HEADER, clearedCookie, readSessionCookie, sessionCookie } from '../console/cookie.ts';
import type { SessionView } from '../console/sessions.ts';
import { headerValue } from '../context.ts';
import type { AppDeps } from '../deps.ts';
import { keyLacksScope, requestProblem } from '../errors.ts';
import { discardBody, readJsonBody } from './body.ts';
import { errorResponses, textResponse } from './openapi.ts';
import { bodyFailure } from './problem.ts';
import { sendError, sendJson } from './respond.ts';
import type { RouteEntry, RouteHandler } from './route-table.ts';

/**
 * The web console (docs/reference.md "Console"): its page at /console (and at every path of it,
 * which the page routes itself), its built assets, and the session it is signed in with.
 *
 * The page and the assets are served with a strict Content-Security-Policy: scripts and styles
 * only from this server (no inline script or style, no CDN), requests only to this server, never
 * framed. Assets are named by a hash of their content, so they are cached for a year; the page is
 * revalidated on every load, so a new build is seen at once.
 */

export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const SECURITY_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

const NO_STORE = { 'cache-control': 'no-store' };

const tags = ['operations'];

const sessionBody = {
  description: 'The session: `{ keyId, expiresAt, csrfToken }` (never the key or the cookie value)',
  content: { 'application/json': {} },
};

export function consoleRoutes(deps: AppDeps): RouteEntry[] {
  const { publicUrl } = deps.config;
  const maxAge = Math.floor(LIMITS.consoleSessionMs / 1000);

  const page: RouteHandler = async (req, res) => {
    discardBody(req);
    const files = await consoleFiles();
    if (!files) {
      res.writeHead(503, { ...NO_STORE, 'content-type': 'text/plain; charset=utf-8' });
      res.end('The console is not built: run npm run build.\n');
      return;
    }
    const headers = {
      ...SECURITY_HEADERS,
      'cache-control': 'no-cache',
      etag: files.pageEtag,
      'content-type': 'text/html; charset=utf-8',
    };
    if (req.headers['if-none-match'] === files.pageEtag) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    res.writeHead(200, { ...headers, 'content-length': files.page.length });
    res.end(files.page);
  };

  const pageRoute = (path: string): RouteEntry => ({ method: 'GET', path, handle: page });

  /** The session's answer: its view, never cached. */
  const sendSession = (res: ServerResponse, view: SessionView, cookie?: string) =>
    sendJson(res, 200, view, { ...NO_STORE, ...(cookie ? { 'set-cookie': cookie } : {}) });

  const noSession = (res: ServerResponse) =>
    sendError(res, apiError('invalid_api_key', 'Not signed in to the console.'), NO_STORE);

  return [
    {
      method: 'GET',
      path: '/console',
      openapi: {
        operationId: 'console',
        tags,
        summary: 'The web console (served offline: no CDN, strict CSP)',
        description:
          'A browser application signed in with an admin key. Every path under /console/ answers the same page, ' +
          'which shows the part the path names (`/console/apps/pets`).',
        security: [],
        responses: { '200': textResponse('HTML page', 'text/html') },
      },
      handle: page,
    },
    pageRoute('/console/'),
    pageRoute('/console/{page}'),
    pageRoute('/console/{page}/{item}'),
    {
      method: 'GET',
      path: '/console/assets/{file}',
      handle: async (req, res, { params }) => {
        discardBody(req);
        const asset = (await consoleFiles())?.assets.get(params.file ?? '');
        if (!asset) return sendError(res, apiError('not_found', 'No such path.'));
        res.writeHead(200, {
          ...SECURITY_HEADERS,
          'content-type': asset.type,
          'content-length': asset.body.length,
          'cache-control': 'public, max-age=31536000, immutable',
        });
        res.end(asset.body);
      },
    },
    {
      method: 'POST',
      path: '/console/session',
      openapi: {
        operationId: 'consoleSignIn',
        tags,
        summary: 'Sign in to the web console: exchange an admin key for a session cookie',
        description:
          'Body `{ "apiKey": "<a key with scope admin>" }`. Answers the session and sets the HttpOnly, ' +
          'SameSite=Strict cookie `toolgate_console` (`__Host-toolgate_console`, Secure, when PUBLIC_URL is https). ' +
          'Admin routes accept the cookie instead of a key; a change also needs the header `X-CSRF-Token: <csrfToken>`. ' +
          'The session ends after 12 hours, at sign-out, or as soon as its key is revoked.',
        security: [],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: { apiKey: { type: 'string' } },
                required: ['apiKey'],
                additionalProperties: false,
              },
            },
          },
        },
        responses: {
          '200': sessionBody,
          ...errorResponses([
            'invalid_request',
            'invalid_api_key',
            'rbac_denied',
            'payload_too_large',
            'unsupported_media_type',
            'internal_error',
          ]),
        },
      },
      handle: async (req, res, { requestId }) => {
        if (crossSite(req, publicUrl)) {
          discardBody(req);
          const message = 'A console sign-in must come from the console page of this server.';
          return sendError(res, requestProblem(message));
        }
        const body = await readJsonBody(req, deps.config.maxBodyBytes);
        if (!body.ok) return sendError(res, bodyFailure(body.error, deps.config.maxBodyBytes));
        const apiKey = (body.value as { apiKey?: unknown } | undefined)?.apiKey;
        if (
          typeof body.value !== 'object' ||
          body.value === null ||
          Object.keys(body.value).some((key) => key !== 'apiKey') ||
          typeof apiKey !== 'string' ||
          apiKey.length === 0
        ) {
          const message = 'Send { "apiKey": "<admin key>" }.';
          return sendError(
            res,
            apiError('invalid_request', message, {
              issues: [
                { path: typeof apiKey === 'string' || apiKey === undefined ? '/apiKey' : '', message },
              ],
            }),
          );
        }
        const principal = await deps.keys.authenticate(`Bearer ${apiKey}`, {
          address: req.socket.remoteAddress,
        });
        if (!principal.ok)
          return sendError(
            res,
            apiError('invalid_api_key', 'This key is not a valid API key (unknown, mistyped or revoked).'),
          );
        if (!principal.value.scopes.includes(SCOPE.admin)) return sendError(res, keyLacksScope(SCOPE.admin));
        const opened = await deps.consoleSessions.open(principal.value);
        deps.logger.info({ requestId, keyId: principal.value.keyId }, 'console sign-in');
        sendSession(res, opened.view, sessionCookie(publicUrl, opened.token, maxAge));
      },
    },
    {
      method: 'GET',
      path: '/console/session',
      openapi: {
        operationId: 'consoleSession',
        tags,
        summary: "The web console's current session (from its cookie)",
        security: [],
        responses: {
          '200': sessionBody,
          ...errorResponses(['invalid_api_key', 'internal_error']),
        },
      },
      handle: async (req, res) => {
        discardBody(req);
        const token = readSessionCookie(req.headers, publicUrl);
        const session = token === undefined ? null : await deps.consoleSessions.find(token);
        if (!session) return noSession(res);
        sendSession(res, session.view);
      },
    },
    {
      method: 'DELETE',
      path: '/console/session',
      openapi: {
        operationId: 'consoleSignOut',
        tags,
        summary: 'Sign out of the web console (needs X-CSRF-Token while the session lives)',
        security: [],
        responses: {
          '200': {
            description: '`{ "ok": true }`; the cookie is cleared',
            content: { 'application/json': {} },
          },
          ...errorResponses(['invalid_api_key', 'internal_error']),
        },
      },
      handle: async (req, res) => {
        discardBody(req);
        const token = readSessionCookie(req.headers, publicUrl);
        const cleared = { ...NO_STORE, 'set-cookie': clearedCookie(publicUrl) };
        if (token !== undefined && (await deps.consoleSessions.find(token))) {
          if (!deps.consoleSessions.csrfMatches(token, headerValue(req.headers, CSRF_HEADER)))
            return sendError(
              res,
              apiError('invalid_api_key', 'Signing out needs the X-CSRF-Token.'),
              NO_STORE,
            );
          await deps.consoleSessions.close(token);
        }
        sendJson(res, 200, { ok: true }, cleared);
      },
    },
  ];
}

/**
 * A request another site's page made: browsers send Sec-Fetch-Site (Fetch Metadata), so a sign-in
 * posted from elsewhere (login CSRF) is refused. A browser too old for it still sends Origin with
 * a POST: one that is neither this server's public origin nor its Host is refused too (`null`, an
 * opaque origin, included). Non-browser clients send neither and are judged by their key alone.
 */
function crossSite(req: IncomingMessage, publicUrl: string): boolean {
  const site = headerValue(req.headers, 'sec-fetch-site');
  if (site !== undefined) return site !== 'same-origin' && site !== 'none';
  const origin = headerValue(req.headers, 'origin');
  if (origin === undefined) return false;
  const from = URL.parse(origin);
  return from === null || (from.origin !== new URL(publicUrl).origin && from.host !== req.headers.host);
}
