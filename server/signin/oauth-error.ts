import type { ServerResponse } from 'node:http';
import { sendJson } from '../http/respond.ts';

/**
 * The OAuth endpoints' errors (/oauth2/*): RFC 6749 §5.2, RFC 7591 §3.2.2, RFC 7009 §2.2.1 and
 * RFC 8707 §2 name them, and OAuth clients (the MCP SDKs among them) parse exactly
 * `{ error, error_description }`; so these endpoints answer that shape, not the §1 error body of
 * the agent API.
 */
export const OAUTH_ERROR_STATUS = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  unsupported_response_type: 400,
  unsupported_token_type: 400,
  invalid_scope: 400,
  invalid_target: 400,
  invalid_redirect_uri: 400,
  invalid_client_metadata: 400,
  access_denied: 403,
  server_error: 500,
} as const;

export type OAuthErrorCode = keyof typeof OAUTH_ERROR_STATUS;

export interface OAuthError {
  error: OAuthErrorCode;
  error_description: string;
}

export function oauthError(error: OAuthErrorCode, description: string): OAuthError {
  return { error, error_description: description };
}

/** Every answer of these endpoints may carry a token or a client's data: never cached. */
export const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' } as const;

/** Writes the error with its status (`status` overrides it: /oauth2/authorize shows every refusal as 400). */
export function sendOAuthError(res: ServerResponse, failure: OAuthError, status?: number): void {
  sendJson(res, status ?? OAUTH_ERROR_STATUS[failure.error], failure, { ...NO_STORE });
}
