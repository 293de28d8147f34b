/**
 * The contract's error table (docs/reference.md "Calling conventions"): every error code with its HTTP status.
 * One place: the server maps typed outcomes to responses with it, the SDK narrows on it.
 */
export const ERROR_STATUS = {
  invalid_request: 400,
  invalid_parameters: 400,
  redirect_uri_mismatch: 400,
  state_invalid: 400,
  invalid_api_key: 401,
  invalid_client: 401,
  auth_required: 401,
  rbac_denied: 403,
  tool_not_found: 404,
  app_not_found: 404,
  not_found: 404,
  method_not_allowed: 405,
  idempotency_in_progress: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  rate_limited: 429,
  internal_error: 500,
  upstream_error: 502,
  upstream_unreachable: 502,
  upstream_too_large: 502,
  upstream_timeout: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** One problem in a request, `path` a JSON Pointer ("" for the whole body). */
export interface Issue {
  path: string;
  message: string;
}

/** Extra fields each error code carries (docs/reference.md "Calling conventions"). */
export interface ErrorExtras {
  invalid_request: { issues: Issue[] };
  invalid_parameters: { tool_id: string; issues: Issue[] };
  redirect_uri_mismatch: Record<never, never>;
  state_invalid: Record<never, never>;
  invalid_api_key: Record<never, never>;
  invalid_client: Record<never, never>;
  auth_required: { auth_endpoint: string; app_id: string; reauth_required?: true };
  rbac_denied: { reason: 'scope_missing'; scope: string };
  tool_not_found: { tool_id: string };
  app_not_found: { app_id: string };
  not_found: Record<never, never>;
  method_not_allowed: Record<never, never>;
  idempotency_in_progress: Record<never, never>;
  payload_too_large: { limit: number };
  unsupported_media_type: Record<never, never>;
  idempotency_key_reused: Record<never, never>;
  rate_limited: { retry_after: number };
  internal_error: Record<never, never>;
  upstream_error: { upstream_status: number; upstream_body: string };
  upstream_unreachable: Record<never, never>;
  upstream_too_large: { limit: number };
  upstream_timeout: Record<never, never>;
}

export type ErrorBody<C extends ErrorCode = ErrorCode> = {
  [K in C]: { ok: false; error: K; message: string } & ErrorExtras[K];
}[C];

/** Codes whose extras are all optional, so `apiError(code, message)` needs no third argument. */
type NoExtras = {
  [K in ErrorCode]: Record<never, never> extends ErrorExtras[K] ? K : never;
}[ErrorCode];

/** Builds the contract's error body. */
export function apiError<C extends NoExtras>(code: C, message: string): ErrorBody<C>;
export function apiError<C extends ErrorCode>(code: C, message: string, extras: ErrorExtras[C]): ErrorBody<C>;
export function apiError<C extends ErrorCode>(
  code: C,
  message: string,
  extras?: ErrorExtras[C],
): ErrorBody<C> {
  return { ok: false, error: code, message, ...(extras ?? {}) } as ErrorBody<C>;
}

export function statusOf(code: ErrorCode): number {
  return ERROR_STATUS[code];
}
