import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { apiError, type ErrorBody } from '../shared/errors.ts';
import { HEADER } from '../shared/headers.ts';
import { hasScope, SCOPE } from './auth/scopes.ts';
import { type Context, headerValue } from './context.ts';
import { ApiProblem, issuesFromZod } from './problem.ts';

/** The contract body for any error leaving a procedure, whichever transport carries it. */
export function problemBody(error: unknown): ErrorBody {
  if (error instanceof ApiProblem) return error.body;
  const cause = (error as { cause?: unknown })?.cause;
  if (cause && typeof cause === 'object' && (cause as { name?: string }).name === 'ZodError') {
    const issues = issuesFromZod((cause as { issues: Parameters<typeof issuesFromZod>[0] }).issues);
    return apiError('invalid_request', 'The request does not have the expected shape.', { issues });
  }
  return apiError('internal_error', 'The server failed to handle this request.');
}

const t = initTRPC
  .context<Context>()
  .meta<OpenApiMeta>()
  .create({
    // Never ship stacks; tRPC clients find the contract body under `data.contract`.
    isDev: false,
    errorFormatter({ shape, error }) {
      return { ...shape, message: problemBody(error).message, data: { contract: problemBody(error) } };
    },
  });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
export const publicProcedure = t.procedure;

/** Any valid API key (or the bootstrap admin key). */
export const keyProcedure = publicProcedure.use(async function requireApiKey({ ctx, next }) {
  const outcome = await ctx.deps.keys.authenticate(headerValue(ctx.headers, HEADER.authorization));
  if (!outcome.ok) {
    throw new ApiProblem(
      apiError('invalid_api_key', 'The API key is missing, malformed, unknown or revoked.'),
    );
  }
  return next({ ctx: { principal: outcome.principal } });
});

/** An agent call: a key plus the client it was issued to (X-Service-Client-Id). */
export const agentProcedure = keyProcedure.use(async function requireClient({ ctx, next }) {
  const clientId = headerValue(ctx.headers, HEADER.clientId);
  if (!clientId || clientId !== ctx.principal.clientId) {
    throw new ApiProblem(
      apiError(
        'invalid_client',
        'X-Service-Client-Id is missing, unknown, or not the client this key was issued to.',
      ),
    );
  }
  return next({ ctx: { clientId } });
});

/** Fails with 403 rbac_denied naming the scope, the contract's answer for a missing scope. */
export function requireScope(scopes: readonly string[], scope: string): void {
  if (!hasScope(scopes, scope)) {
    throw new ApiProblem(
      apiError('rbac_denied', `This API key lacks the scope ${scope}.`, { reason: 'scope_missing', scope }),
    );
  }
}

export const adminProcedure = keyProcedure.use(async function requireAdmin({ ctx, next }) {
  requireScope(ctx.principal.scopes, SCOPE.admin);
  return next();
});
