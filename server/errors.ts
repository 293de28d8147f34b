import { apiError, ERROR_STATUS, type ErrorBody, type Issue } from '../shared/errors.ts';

/**
 * Contract errors, transport-free: services and cores build these bodies; routers throw an
 * ApiProblem. The transports map it, each in one place: REST answers `body` with `headers`
 * (http/rest.ts), tRPC turns it into its own error of the same status (trpc.ts) whose formatter
 * writes `body` (http/problem.ts).
 */

/** A contract error leaving a procedure: the body every surface answers, and the headers REST adds. */
export class ApiProblem extends Error {
  readonly body: ErrorBody;
  /** The HTTP status of the body's code (shared/errors.ts). */
  readonly status: number;
  /** `Retry-After` of a 429, `X-Service-Idempotent-Replayed` of a stored 502/504. */
  readonly headers: Record<string, string>;

  constructor(body: ErrorBody, headers: Record<string, string> = {}) {
    super(body.message);
    this.name = 'ApiProblem';
    this.body = body;
    this.status = ERROR_STATUS[body.error];
    this.headers = headers;
  }
}

/** 403 rbac_denied: the caller's API key lacks `scope`. */
export function keyLacksScope(scope: string): ErrorBody<'rbac_denied'> {
  return apiError('rbac_denied', `This API key lacks the scope ${scope}.`, {
    reason: 'scope_missing',
    scope,
  });
}

/** 400 invalid_request about a header: the pointer is "" because headers are not in the body. */
export function badHeader(message: string): ErrorBody<'invalid_request'> {
  return requestProblem(message);
}

/**
 * 400 invalid_request about the request as a whole (its target, its framing, its body as a whole),
 * not about one member of the body: one issue at the pointer "", saying `issue` (else `message`).
 */
export function requestProblem(message: string, issue: string = message): ErrorBody<'invalid_request'> {
  return apiError('invalid_request', message, { issues: [{ path: '', message: issue }] });
}

/** 400 for an input its schema refuses (tRPC's input parser, or a surface that parses the same schema). */
export function inputProblem(zodIssues: readonly ZodLikeIssue[]): ErrorBody<'invalid_request'> {
  return apiError('invalid_request', 'The request does not have the expected shape.', {
    issues: issuesFromZod(zodIssues),
  });
}

/** JSON Pointer of a path (RFC 6901). */
function toPointer(path: readonly PropertyKey[]): string {
  return path.map((part) => `/${String(part).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

export interface ZodLikeIssue {
  path: readonly PropertyKey[];
  message: string;
  code?: string;
  input?: unknown;
}

/** Zod issues as the contract's `issues`: a missing value says so at its own pointer. */
export function issuesFromZod(issues: readonly ZodLikeIssue[]): Issue[] {
  return issues.map((issue) => ({
    path: toPointer(issue.path),
    message:
      issue.code === 'invalid_type' &&
      // Zod 4 leaves `input` out of issues unless asked; its message still names what it received.
      ('input' in issue ? issue.input === undefined : issue.message.endsWith('received undefined'))
        ? 'Required value is missing.'
        : sentence(issue.message),
  }));
}

function sentence(message: string): string {
  const text = message.charAt(0).toUpperCase() + message.slice(1);
  return /[.!?]$/.test(text) ? text : `${text}.`;
}
