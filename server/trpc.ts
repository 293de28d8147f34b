import { initTRPC, TRPCError } from '@trpc/server';
import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { apiError, type ErrorBody } from '../shared/errors.ts';
import { HEADER } from '../shared/headers.ts';
import type { Principal } from './auth/authenticate.ts';
import { hasScope, SCOPE } from './auth/scopes.ts';
import { type Context, headerValue } from './context.ts';
import { ApiProblem, issuesFromZod, keyLacksScope } from './http/problem.ts';

/**
 * The contract body for any error leaving a procedure, whichever transport carries it. Besides
 * our own ApiProblems and input errors, tRPC raises its own for a caller's mistakes (an unknown
 * procedure, a query sent as POST, a body it cannot parse…): each gets its row of the contract
 * table, so only a real failure of ours is `internal_error`.
 */
export function problemBody(error: unknown, bodyLimit = 0): ErrorBody {
  if (error instanceof ApiProblem) return error.body;
  const cause = (error as { cause?: unknown })?.cause;
  if (cause && typeof cause === 'object' && (cause as { name?: string }).name === 'ZodError')
    return inputProblem((cause as { issues: Parameters<typeof issuesFromZod>[0] }).issues);
  if (error instanceof TRPCError) {
    const mistake = clientMistake(error, bodyLimit);
    if (mistake) return mistake;
  }
  return apiError('internal_error', 'The server failed to handle this request.');
}

/** 400 for an input its schema refuses (tRPC's input parser, or a surface that parses the same schema). */
export function inputProblem(zodIssues: Parameters<typeof issuesFromZod>[0]): ErrorBody {
  return apiError('invalid_request', 'The request does not have the expected shape.', {
    issues: issuesFromZod(zodIssues),
  });
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
      return apiError('unsupported_media_type', 'The body must be application/json.');
    case 'PAYLOAD_TOO_LARGE':
      return apiError('payload_too_large', `The body is larger than ${bodyLimit} bytes.`, {
        limit: bodyLimit,
      });
    case 'PARSE_ERROR':
      return apiError('invalid_request', 'The input is not valid JSON.', {
        issues: [{ path: '', message: 'Malformed JSON.' }],
      });
    case 'BAD_REQUEST':
      return apiError('invalid_request', 'The request is not a valid tRPC call.', {
        issues: [{ path: '', message: 'Malformed tRPC request.' }],
      });
    default:
      return null;
  }
}

/**
 * A tRPC error answer written outside tRPC (a body refused before tRPC reads it), in the shape the
 * error formatter below gives tRPC's own: the contract body under `error.data.contract`.
 */
export function trpcErrorEnvelope(body: ErrorBody): {
  error: { message: string; code: number; data: { contract: ErrorBody } };
} {
  const code = TRPC_ERROR_CODES_BY_KEY[new ApiProblem(body).code];
  return { error: { message: body.message, code, data: { contract: body } } };
}

const t = initTRPC
  .context<Context>()
  .meta<OpenApiMeta>()
  .create({
    // Never ship stacks; tRPC clients find the contract body under `data.contract`.
    isDev: false,
    errorFormatter({ shape, error, ctx }) {
      const contract = problemBody(error, ctx?.deps.config.maxBodyBytes);
      return { ...shape, message: contract.message, data: { contract } };
    },
  });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
export const publicProcedure = t.procedure;

/** The caller's key, or 401 invalid_api_key. */
async function authenticateKey(ctx: Context): Promise<Principal> {
  const outcome = await ctx.deps.keys.authenticate(headerValue(ctx.headers, HEADER.authorization), {
    address: ctx.remoteAddress,
  });
  if (!outcome.ok) {
    throw new ApiProblem(
      apiError('invalid_api_key', 'The API key is missing, malformed, unknown or revoked.'),
    );
  }
  ctx.logFields.keyId = outcome.value.keyId;
  return outcome.value;
}

/**
 * An agent's key plus the client it was issued to (X-Service-Client-Id), or 401. One function,
 * so a route can add its own step (the rate limit of /proxyV2) without another middleware level:
 * tRPC copies the context at every level, which the bench profile shows on the hot path.
 */
export async function authenticateAgent(ctx: Context): Promise<{ principal: Principal; clientId: string }> {
  const principal = await authenticateKey(ctx);
  const clientId = headerValue(ctx.headers, HEADER.clientId);
  if (principal.clientId) ctx.logFields.clientId = principal.clientId;
  if (!clientId || clientId !== principal.clientId) {
    throw new ApiProblem(
      apiError(
        'invalid_client',
        'X-Service-Client-Id is missing, unknown, or not the client this key was issued to.',
      ),
    );
  }
  return { principal, clientId };
}

/** Any valid API key (or the bootstrap admin key). */
export const keyProcedure = publicProcedure.use(async function requireApiKey({ ctx, next }) {
  return next({ ctx: { principal: await authenticateKey(ctx) } });
});

/** An agent call: a key plus the client it was issued to. */
export const agentProcedure = publicProcedure.use(async function requireAgent({ ctx, next }) {
  return next({ ctx: await authenticateAgent(ctx) });
});

/** Fails with 403 rbac_denied naming the scope, the contract's answer for a missing scope. */
export function requireScope(scopes: readonly string[], scope: string): void {
  if (!hasScope(scopes, scope)) {
    throw new ApiProblem(keyLacksScope(scope));
  }
}

export const adminProcedure = keyProcedure.use(async function requireAdmin({ ctx, next }) {
  requireScope(ctx.principal.scopes, SCOPE.admin);
  return next();
});
