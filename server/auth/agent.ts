import type { IncomingHttpHeaders } from 'node:http';
import { apiError, type ErrorBody } from '../../shared/errors.ts';
import { HEADER } from '../../shared/headers.ts';
import { headerValue } from '../context.ts';
import type { RequestLogFields } from '../logger.ts';
import { err, ok, type Result } from '../result.ts';
import { type ApiKeyVerifier, bearerCredential, type Principal } from './authenticate.ts';

/**
 * Who is calling, as every surface signs a caller in: REST and tRPC (the `agentProcedure` layer of
 * trpc.ts) and MCP (mcp/http.ts) call `authenticateAgent`, so the order (key, then client) and
 * the answers are one.
 */

/**
 * An authenticated agent: what a call may do (`principal`: its key's id and scopes) and the client
 * it acts for. Today an API key with X-Service-Client-Id makes one; an MCP access token (issue 24)
 * makes one too: the token's id and granted scopes as the principal, the token's client as
 * `clientId`, and `userId` = `oidc:<sub>`, the signed-in person, instead of X-Service-User-Id.
 */
export interface Caller {
  principal: Principal;
  clientId: string;
  /** The end user the credential itself names (an MCP access token); absent for an API key. */
  userId?: string;
}

/**
 * Bearer credentials other than API keys that a surface accepts: the access tokens of MCP sign-in
 * (signin/access-tokens.ts), which only /mcp hands in. `claims` says whether a bearer value has
 * the verifier's shape (so it never reaches the API-key check); `verify` answers its caller, or
 * undefined for an unknown, expired or revoked token.
 */
export interface BearerTokens {
  claims(token: string): boolean;
  verify(token: string): Promise<Caller | undefined>;
}

/** 401 invalid_api_key: the one answer to a missing, malformed, unknown or revoked key. */
export function invalidApiKey(): ErrorBody<'invalid_api_key'> {
  return apiError('invalid_api_key', 'The API key is missing, malformed, unknown or revoked.');
}

/** 401 invalid_client: X-Service-Client-Id does not name the key's client. */
export function invalidClient(): ErrorBody<'invalid_client'> {
  return apiError(
    'invalid_client',
    'X-Service-Client-Id is missing, unknown, or not the client this key was issued to.',
  );
}

/**
 * The request's API key (Authorization: Bearer), or 401 invalid_api_key. `address` is the client's
 * (the socket's), for the failed-key limiter; `logFields`, when given, learns the key's id (the
 * request log line of REST and tRPC).
 */
export async function authenticateKey(
  keys: ApiKeyVerifier,
  headers: IncomingHttpHeaders,
  address: string | undefined,
  logFields?: RequestLogFields,
): Promise<Result<Principal, ErrorBody>> {
  const outcome = await keys.authenticate(headerValue(headers, HEADER.authorization), { address });
  if (!outcome.ok) return err(invalidApiKey());
  if (logFields) logFields.keyId = outcome.value.keyId;
  return outcome;
}

/**
 * An agent's key plus the client it was issued to (X-Service-Client-Id), or 401: invalid_api_key
 * first, then invalid_client. `logFields`, when given, learns the key and its client. `tokens`,
 * given by /mcp alone, also admits its bearer tokens: such a token names its client and user
 * itself (X-Service-Client-Id and X-Service-User-Id are not read), and an unknown, expired or
 * revoked one is the same 401 invalid_api_key as a bad key.
 */
export async function authenticateAgent(
  keys: ApiKeyVerifier,
  headers: IncomingHttpHeaders,
  address: string | undefined,
  logFields?: RequestLogFields,
  tokens?: BearerTokens,
): Promise<Result<Caller, ErrorBody>> {
  const bearer = tokens ? bearerCredential(headerValue(headers, HEADER.authorization)) : undefined;
  if (tokens && bearer && tokens.claims(bearer)) {
    const caller = await tokens.verify(bearer);
    if (!caller) return err(invalidApiKey());
    if (logFields) {
      logFields.keyId = caller.principal.keyId;
      logFields.clientId = caller.clientId;
    }
    return ok(caller);
  }
  const key = await authenticateKey(keys, headers, address, logFields);
  if (!key.ok) return key;
  const principal = key.value;
  if (logFields && principal.clientId) logFields.clientId = principal.clientId;
  const clientId = headerValue(headers, HEADER.clientId);
  if (!clientId || clientId !== principal.clientId) return err(invalidClient());
  return ok({ principal, clientId });
}
