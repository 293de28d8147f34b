import { apiError, type ErrorBody } from '../../shared/errors.ts';
import { HEADER } from '../../shared/headers.ts';
import { CSRF_HEADER, readSessionCookie } from '../console/cookie.ts';
import { headerValue } from '../context.ts';
import type { AppDeps } from '../deps.ts';
import type { RequestLogFields } from '../logger.ts';
import { err, ok, type Result } from '../result.ts';
import { authenticateKey } from './agent.ts';
import type { Principal } from './authenticate.ts';

/**
 * Who is calling an admin procedure: an API key (Authorization: Bearer), or — only when no
 * Authorization header is sent — the web console's session cookie (console/sessions.ts). A
 * request carrying a key is judged by the key alone, so the cookie never changes what an API
 * caller gets. With the cookie, a procedure that changes state (`mutation`) also needs the
 * session's X-CSRF-Token; without it the cookie is no credential (401 invalid_api_key, the
 * contract's answer to a request without a valid credential).
 */
export async function authenticateAdmin(
  deps: AppDeps,
  request: {
    headers: Parameters<typeof authenticateKey>[1];
    remoteAddress: string | undefined;
    logFields?: RequestLogFields;
    changesState: boolean;
  },
): Promise<Result<Principal, ErrorBody>> {
  const { headers } = request;
  const token =
    headers[HEADER.authorization] === undefined
      ? readSessionCookie(headers, deps.config.publicUrl)
      : undefined;
  if (token === undefined)
    return authenticateKey(deps.keys, headers, request.remoteAddress, request.logFields);
  const session = await deps.consoleSessions.find(token);
  if (!session) {
    return err(
      apiError('invalid_api_key', 'The console session has ended (signed out, expired, or its key revoked).'),
    );
  }
  if (request.changesState && !deps.consoleSessions.csrfMatches(token, headerValue(headers, CSRF_HEADER))) {
    return err(apiError('invalid_api_key', 'A change made with a console session needs its X-CSRF-Token.'));
  }
  if (request.logFields) request.logFields.keyId = session.principal.keyId;
  return ok(session.principal);
}
