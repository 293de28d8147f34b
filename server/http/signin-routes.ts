import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppDeps } from '../deps.ts';
import { authorizationServerMetadata, protectedResourceMetadata } from '../signin/metadata.ts';
import { NO_STORE, oauthError, sendOAuthError } from '../signin/oauth-error.ts';
import { SIGNIN_PATH } from '../signin/paths.ts';
import type { Signin } from '../signin/signin.ts';
import { discardBody, readFormBody, readJsonBody } from './body.ts';
import { bodyFailure } from './problem.ts';
import { sendError, sendJson } from './respond.ts';
import type { RouteEntry } from './route-table.ts';
import { signinPages } from './signin-pages.ts';

/** Discovery documents are public and the same for every caller: any origin may read them. */
const METADATA_HEADERS = { 'access-control-allow-origin': '*', 'cache-control': 'max-age=300' };

/**
 * CORS of what a browser client (a web MCP client, a public client with PKCE) calls by fetch:
 * discovery, registration (RFC 7591), token (RFC 6749 §3.2) and revocation (RFC 7009). Any origin
 * (`*`): these endpoints read no cookie nor any other ambient authority, so an answer depends only
 * on what the request itself carries (client metadata, a code with its PKCE verifier, a refresh
 * token), and a page learns nothing it did not already hold; `*` also rules credentials out. The
 * OAuth security BCP (RFC 9700, "Usage of CORS") admits CORS on exactly these endpoints and forbids
 * it on the authorization endpoint, which, like the consent and /me pages, is a navigation and
 * gets none. A preflight is needed because registration posts application/json and the MCP SDK's
 * discovery sends MCP-Protocol-Version (token and revoke are simple requests for a public client).
 */
function readableFromAnyOrigin(res: ServerResponse): void {
  res.setHeader('access-control-allow-origin', '*');
}

/** OPTIONS on one of those paths: 204 saying which method and headers a page may send, for 2 hours. */
function preflightRoute({ path, method }: RouteEntry): RouteEntry {
  return {
    method: 'OPTIONS',
    path,
    handle: async (req, res) => {
      discardBody(req);
      res.writeHead(204, {
        'access-control-allow-origin': '*',
        'access-control-allow-methods': method,
        'access-control-allow-headers': 'content-type, accept, mcp-protocol-version',
        'access-control-max-age': '7200',
      });
      res.end();
    },
  };
}

/**
 * The paths of MCP sign-in (docs/reference.md "MCP sign-in"): discovery, registration, and (later
 * entries) authorize, token, revoke and the person's pages. Only when sign-in is configured: without
 * LOGIN_OIDC_* the table has none of them, so each answers 404.
 */
export function signinRoutes(deps: AppDeps): RouteEntry[] {
  const signin = deps.signin;
  if (!signin) return [];
  // What a browser client calls by fetch, each with its preflight (readableFromAnyOrigin says why);
  // the person's pages are navigations and get none.
  const fetched = [...discoveryRoutes(signin), registrationRoute(deps, signin), ...tokenRoutes(deps, signin)];
  return [...fetched, ...fetched.map(preflightRoute), ...signinPages(deps, signin)];
}

function discoveryRoutes(signin: Signin): RouteEntry[] {
  const resource = protectedResourceMetadata(signin.issuer);
  const server = authorizationServerMetadata(signin.issuer);
  const answer =
    (body: unknown): RouteEntry['handle'] =>
    async (req, res) => {
      discardBody(req);
      sendJson(res, 200, body, METADATA_HEADERS);
    };
  return [
    { method: 'GET', path: SIGNIN_PATH.protectedResourceMcp, handle: answer(resource) },
    { method: 'GET', path: SIGNIN_PATH.protectedResource, handle: answer(resource) },
    { method: 'GET', path: SIGNIN_PATH.authorizationServer, handle: answer(server) },
  ];
}

/** POST /oauth2/register (RFC 7591): 201 with the client's registration, or 400 with the RFC's error. */
function registrationRoute(deps: AppDeps, signin: Signin): RouteEntry {
  return {
    method: 'POST',
    path: SIGNIN_PATH.register,
    handle: async (req, res, { requestId }) => {
      readableFromAnyOrigin(res);
      const read = await readJsonBody(req, deps.config.maxBodyBytes);
      if (!read.ok) {
        if (read.error === 'payload_too_large') {
          sendError(res, bodyFailure(read.error, deps.config.maxBodyBytes));
          return;
        }
        const text =
          read.error === 'unsupported_media_type'
            ? 'The body must be application/json.'
            : 'The body is not valid JSON.';
        sendOAuthError(res, oauthError('invalid_client_metadata', text));
        return;
      }
      const registered = await signin.clients.register(read.value);
      if (!registered.ok) {
        sendOAuthError(res, registered.error);
        return;
      }
      deps.logger.info({ requestId, clientId: registered.value.client_id }, 'mcp client registered');
      sendJson(res, 201, registered.value, NO_STORE);
    },
  };
}

/** POST /oauth2/token and /oauth2/revoke: form bodies (RFC 6749 §3.2), JSON answers, never cached. */
function tokenRoutes(deps: AppDeps, signin: Signin): RouteEntry[] {
  const limit = deps.config.maxBodyBytes;
  const form = async (req: IncomingMessage, res: ServerResponse): Promise<URLSearchParams | undefined> => {
    // Every answer, errors included (a browser client must read them too).
    readableFromAnyOrigin(res);
    const read = await readFormBody(req, limit);
    if (read.ok) return read.value;
    if (read.error === 'payload_too_large') sendError(res, bodyFailure(read.error, limit));
    else
      sendOAuthError(
        res,
        oauthError('invalid_request', 'The body must be application/x-www-form-urlencoded.'),
      );
    return undefined;
  };
  return [
    {
      method: 'POST',
      path: SIGNIN_PATH.token,
      handle: async (req, res) => {
        const params = await form(req, res);
        if (!params) return;
        const answer = await signin.tokens.exchange(params);
        if (!answer.ok) return sendOAuthError(res, answer.error);
        sendJson(res, 200, answer.value, NO_STORE);
      },
    },
    {
      method: 'POST',
      path: SIGNIN_PATH.revoke,
      handle: async (req, res) => {
        const params = await form(req, res);
        if (!params) return;
        const revoked = await signin.tokens.revoke(params);
        if (!revoked.ok) return sendOAuthError(res, revoked.error);
        res.writeHead(200, { ...NO_STORE, 'content-length': '0' });
        res.end();
      },
    },
  ];
}
