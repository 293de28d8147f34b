import { ERROR_STATUS, type ErrorBody, type ErrorCode } from '../../shared/errors.ts';

/**
 * A contract error: the server answered one of the codes of docs/reference.md "Calling conventions" with its status.
 * Narrow on `error` and `body` has that code's extra fields, typed from `shared/errors.ts`.
 *
 * @example
 * const result = await toolgate.execute('github:::create_issue', parameters, { userId: 'u1' });
 * if (!result.ok && result.error === 'upstream_error') {
 *   console.log(result.body.upstream_status, result.body.upstream_body);
 * }
 */
export type ApiError<C extends ErrorCode = ErrorCode> = {
  [K in C]: {
    ok: false;
    error: K;
    /** The HTTP status, always the one the contract's table gives the code. */
    status: (typeof ERROR_STATUS)[K];
    /** The contract's error body as the server sent it. */
    body: ErrorBody<K>;
    /** `X-Request-Id` of the answer, for the server's log. */
    requestId: string | undefined;
  };
}[C];

/**
 * The request never got an answer: connection refused, DNS failure, TLS failure, a reset, or the
 * client's own time-out (`timedOut: true`). Nothing is known about whether the server ran it; a
 * retry with the same idempotency key is safe.
 */
export interface NetworkError {
  ok: false;
  error: 'network_error';
  message: string;
  timedOut: boolean;
  cause: unknown;
}

/**
 * The server (or something in front of it) answered outside the contract: a body that is not the
 * contract's JSON, or a status that does not match the error code. `text` holds what came back.
 */
export interface UnexpectedResponse {
  ok: false;
  error: 'unexpected_response';
  status: number;
  message: string;
  text: string;
  requestId: string | undefined;
}

/** The caller's `AbortSignal` fired; `reason` is the signal's reason. */
export interface Aborted {
  ok: false;
  error: 'aborted';
  message: string;
  reason: unknown;
}

/** `executeWithAuth` waited `waitedMs` for the user to authorize `appId` and gave up. */
export interface AuthTimeout {
  ok: false;
  error: 'auth_timeout';
  message: string;
  appId: string;
  /** The URL the user was given (from `executeWithAuth`); it works until its state expires (10 minutes). */
  authorizationUrl: string | undefined;
  waitedMs: number;
  /** The last failure seen while polling `GET /connections`, if any (e.g. the network was down). */
  lastError: Failure | undefined;
}

/** Every way a single request can fail. */
export type Failure = ApiError | NetworkError | UnexpectedResponse | Aborted;

/** The answer of one SDK call: `{ ok: true, ...value }` or a typed failure. */
export type Result<T extends object> = ({ ok: true; requestId: string | undefined } & T) | Failure;

/** Every `error` value a result can carry: the contract's codes and the SDK's own kinds. */
export type FailureCode = Failure['error'] | AuthTimeout['error'];

/**
 * Whether `value` is a contract error body (`{ ok: false, error: <known code>, message }`).
 *
 * @example
 * if (isErrorBody(json)) console.log(json.error, json.message);
 */
export function isErrorBody(value: unknown): value is ErrorBody {
  if (typeof value !== 'object' || value === null) return false;
  const body = value as { ok?: unknown; error?: unknown; message?: unknown };
  return (
    body.ok === false &&
    typeof body.error === 'string' &&
    Object.hasOwn(ERROR_STATUS, body.error) &&
    typeof body.message === 'string'
  );
}

/**
 * Whether a failure is a contract error (as opposed to a network failure, an unexpected answer,
 * an abort or a time-out), optionally of the given codes.
 *
 * @example
 * if (isApiError(result, 'invalid_api_key', 'invalid_client')) rotateCredentials();
 */
export function isApiError<C extends ErrorCode = ErrorCode>(
  result: { ok: boolean; error?: unknown },
  ...codes: C[]
): result is ApiError<C> {
  if (result.ok || typeof result.error !== 'string' || !Object.hasOwn(ERROR_STATUS, result.error))
    return false;
  return codes.length === 0 || (codes as string[]).includes(result.error);
}

/** At most this many issues are spelled out by {@link failureMessage}; the rest are counted. */
const SHOWN_ISSUES = 5;

/**
 * One human sentence for any failure: the contract's `message` for a contract error — with what
 * is wrong where, from its `issues`, for `invalid_parameters` and `invalid_request` — and the
 * SDK's own otherwise.
 *
 * @example
 * if (!result.ok) console.error(`${result.error}: ${failureMessage(result)}`);
 * // invalid_parameters: The parameters do not match the tool (/petId: Must be an integer).
 */
export function failureMessage(failure: Failure | AuthTimeout): string {
  if (!('body' in failure)) return failure.message;
  const body: ErrorBody = failure.body;
  if (!('issues' in body) || body.issues.length === 0) return body.message;
  const shown = body.issues
    .slice(0, SHOWN_ISSUES)
    .map((issue) => `${issue.path === '' ? '(body)' : issue.path}: ${withoutPeriod(issue.message)}`);
  const more = body.issues.length - shown.length;
  if (more > 0) shown.push(`${more} more`);
  return `${withoutPeriod(body.message)} (${shown.join('; ')}).`;
}

const withoutPeriod = (sentence: string) => sentence.replace(/\.$/, '');
