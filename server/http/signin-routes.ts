import type { AppDeps } from '../deps.ts';
import { authorizationServerMetadata, protectedResourceMetadata } from '../signin/metadata.ts';
import { NO_STORE, oauthError, sendOAuthError } from '../signin/oauth-error.ts';
import { SIGNIN_PATH } from '../signin/paths.ts';
import type { Signin } from '../signin/signin.ts';
import { readJsonBody } from './body.ts';
import { bodyFailure, bodyFailureHeaders } from './problem.ts';
import { sendError, sendJson } from './respond.ts';
import type { RouteEntry } from './route-table.ts';

/** Discovery documents are public and the same for every caller: any origin may read them. */
const METADATA_HEADERS = { 'access-control-allow-origin': '*', 'cache-control': 'max-age=300' };

/**
 * The paths of MCP sign-in (docs/reference.md "MCP sign-in"): discovery, registration, and (later
 * entries) authorize, token, revoke and the person's pages. Only when sign-in is configured: without
 * LOGIN_OIDC_* the table has none of them, so each answers 404.
 */
export function signinRoutes(deps: AppDeps): RouteEntry[] {
  const signin = deps.signin;
  if (!signin) return [];
  return [...discoveryRoutes(signin), registrationRoute(deps, signin)];
}

function discoveryRoutes(signin: Signin): RouteEntry[] {
  const resource = protectedResourceMetadata(signin.issuer);
  const server = authorizationServerMetadata(signin.issuer);
  const answer =
    (body: unknown): RouteEntry['handle'] =>
    async (req, res) => {
      req.resume();
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
      const read = await readJsonBody(req, deps.config.maxBodyBytes);
      if (!read.ok) {
        if (read.error === 'payload_too_large') {
          sendError(res, bodyFailure(read.error, deps.config.maxBodyBytes), bodyFailureHeaders(read.error));
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
