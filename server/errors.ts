import { apiError, type ErrorBody } from '../shared/errors.ts';

/**
 * Contract error bodies that several services build. Transport-free: services and cores import
 * these, never `problem.ts` (which carries the tRPC error class).
 */

/** 403 rbac_denied: the caller's API key lacks `scope`. */
export function keyLacksScope(scope: string): ErrorBody<'rbac_denied'> {
  return apiError('rbac_denied', `This API key lacks the scope ${scope}.`, {
    reason: 'scope_missing',
    scope,
  });
}

/** 400 invalid_request about a header: the pointer is "" because headers are not in the body. */
export function badHeader(message: string): ErrorBody<'invalid_request'> {
  return apiError('invalid_request', message, { issues: [{ path: '', message }] });
}
