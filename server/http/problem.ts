import { TRPCError } from '@trpc/server';
import { type TRPC_ERROR_CODE_KEY, TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import { apiError, type ErrorBody, statusOf } from '../../shared/errors.ts';
import { ApiProblem, inputProblem, requestProblem, type ZodLikeIssue } from '../errors.ts';
import { type BodyFailure, MAX_JSON_DEPTH } from './body.ts';

/**
 * Errors as the contract's bodies, one mapping for every transport: what a procedure throws (REST
 * and tRPC), what tRPC itself refuses, and a body that could not be read (REST, tRPC and MCP).
 */

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

/** The tRPC code of a contract status: it sets the status of a tRPC answer and its JSON-RPC code. */
export function trpcCodeOf(status: number): TRPC_ERROR_CODE_KEY {
  return TRPC_CODE_BY_STATUS[status] ?? 'INTERNAL_SERVER_ERROR';
}

/** The ApiProblem an error is, or carries as its cause (tRPC wraps what a procedure throws). */
export function apiProblemOf(error: unknown): ApiProblem | undefined {
  if (error instanceof ApiProblem) return error;
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  return cause instanceof ApiProblem ? cause : undefined;
}

/**
 * The contract body for any error leaving a procedure, whichever transport carries it. Besides
 * our own ApiProblems and input errors, tRPC raises its own for a caller's mistakes (an unknown
 * procedure, a query sent as POST, a body it cannot parse…): each gets its row of the contract
 * table, so only a real failure of ours is `internal_error`.
 */
export function problemBody(error: unknown, bodyLimit = 0): ErrorBody {
  const problem = apiProblemOf(error);
  if (problem) return problem.body;
  const cause = (error as { cause?: unknown })?.cause;
  if (cause && typeof cause === 'object' && (cause as { name?: string }).name === 'ZodError')
    return inputProblem((cause as { issues: readonly ZodLikeIssue[] }).issues);
  if (error instanceof TRPCError) {
    const mistake = clientMistake(error, bodyLimit);
    if (mistake) return mistake;
  }
  return apiError('internal_error', 'The server failed to handle this request.');
}

/** tRPC's own codes for a caller's mistake, as contract bodies; null for anything else. */
function clientMistake(error: TRPCError, bodyLimit: number): ErrorBody | null {
  // tRPC reports an `input` query that is not JSON as BAD_REQUEST caused by JSON.parse.
  const code =
    error.code === 'BAD_REQUEST' && error.cause instanceof SyntaxError ? 'PARSE_ERROR' : error.code;
  switch (code) {
    case 'NOT_FOUND':
      return apiError('not_found', 'No such procedure.');
    case 'METHOD_NOT_SUPPORTED':
      return apiError('method_not_allowed', 'This method is not allowed on this procedure.');
    case 'UNSUPPORTED_MEDIA_TYPE':
      return bodyFailure('unsupported_media_type', bodyLimit);
    case 'PAYLOAD_TOO_LARGE':
      return bodyFailure('payload_too_large', bodyLimit);
    case 'PARSE_ERROR':
      return requestProblem('The input is not valid JSON.', 'Malformed JSON.');
    case 'BAD_REQUEST':
      return requestProblem('The request is not a valid tRPC call.', 'Malformed tRPC request.');
    default:
      return null;
  }
}

/** The contract body for a body that could not be read. */
export function bodyFailure(failure: BodyFailure, limit: number): ErrorBody {
  switch (failure) {
    case 'payload_too_large':
      return apiError('payload_too_large', `The body is larger than ${limit} bytes.`, { limit });
    case 'unsupported_media_type':
      return apiError('unsupported_media_type', 'The body must be application/json.');
    case 'too_deep':
      return requestProblem(
        'The body is nested too deeply.',
        `JSON nested deeper than ${MAX_JSON_DEPTH} levels.`,
      );
    case 'malformed_json':
      return requestProblem('The body is not valid JSON.', 'Malformed JSON.');
  }
}

/**
 * A tRPC error answer written outside tRPC (a body refused before tRPC reads it), in the shape the
 * error formatter (trpc.ts) gives tRPC's own: the contract body under `error.data.contract`.
 */
export function trpcErrorEnvelope(body: ErrorBody): {
  error: { message: string; code: number; data: { contract: ErrorBody } };
} {
  const code = TRPC_ERROR_CODES_BY_KEY[trpcCodeOf(statusOf(body.error))];
  return { error: { message: body.message, code, data: { contract: body } } };
}
