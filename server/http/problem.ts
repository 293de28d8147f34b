import { TRPCError } from '@trpc/server';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import { ERROR_STATUS, type ErrorBody, type Issue } from '../../shared/errors.ts';

const TRPC_CODE_BY_STATUS: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_SUPPORTED',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE_CONTENT',
  429: 'TOO_MANY_REQUESTS',
  500: 'INTERNAL_SERVER_ERROR',
  502: 'BAD_GATEWAY',
  504: 'GATEWAY_TIMEOUT',
};

/**
 * A contract error leaving a procedure. Services return typed outcomes; routers turn a failed
 * outcome into this, and both transports (REST and tRPC) answer with exactly `body`.
 */
export class ApiProblem extends TRPCError {
  readonly body: ErrorBody;
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(body: ErrorBody, headers: Record<string, string> = {}) {
    const status = ERROR_STATUS[body.error];
    super({ code: TRPC_CODE_BY_STATUS[status] ?? 'INTERNAL_SERVER_ERROR', message: body.message });
    this.name = 'ApiProblem';
    this.body = body;
    this.status = status;
    this.headers = headers;
  }
}

/** JSON Pointer of a path (RFC 6901). */
export function toPointer(path: readonly PropertyKey[]): string {
  return path.map((part) => `/${String(part).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

interface ZodLikeIssue {
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

// Built transport-free in errors.ts, where services take them from.
export { badHeader, keyLacksScope } from '../errors.ts';
