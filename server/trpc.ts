import { initTRPC, TRPCError } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { ErrorCode } from '../shared/errors.ts';
import { authenticateAdmin } from './auth/admin.ts';
import { authenticateAgent } from './auth/agent.ts';
import { hasScope, SCOPE } from './auth/scopes.ts';
import type { Context } from './context.ts';
import { ApiProblem, keyLacksScope } from './errors.ts';
import { problemBody, trpcCodeOf } from './http/problem.ts';

/**
 * What a procedure declares about its route besides its shapes: one place per route, read by the
 * REST mount (http/rest.ts) and /openapi.json (http/openapi.ts).
 */
export type ProcedureMeta = OpenApiMeta<{
  /**
   * The contract codes the operation answers beyond those of every route (bad input, a wrong
   * method, our own failure) and of a body (413, 415), listed in /openapi.json with their bodies.
   */
  errors?: readonly ErrorCode[];
  /** `document`: the body may hold a whole OpenAPI document, up to MAX_DOCUMENT_BYTES (not MAX_BODY_BYTES). */
  bodyLimit?: 'document';
  /**
   * The fast path: the REST route runs this instead of the tRPC caller, the procedure's own steps
   * without tRPC's per-level context copies (the hot path; a parity test holds the two together).
   */
  direct?: (ctx: Context, input: unknown) => Promise<unknown>;
  /** The request body shown as an example in /openapi.json. */
  example?: unknown;
  /**
   * The 200 body shown as an example in /openapi.json (else Swagger UI invents one from the schema:
   * `"data": "string"`); real values, held to what the example app answers by test/http/docs.test.ts.
   */
  successExample?: unknown;
  /** Headers of the 200 answer beyond X-Request-Id, as OpenAPI header objects. */
  successHeaders?: Record<string, unknown>;
}>;

const t = initTRPC
  .context<Context>()
  .meta<ProcedureMeta>()
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

/**
 * An ApiProblem thrown below becomes tRPC's error of the same status (tRPC wraps whatever else is
 * thrown as a 500); the formatter above writes its body.
 */
export const publicProcedure = t.procedure
  // A query sent without `input` (`GET /trpc/admin.clients.list`, or a client's `.query()`) reads as
  // `{}`, as its REST twin's empty query string does: a call the contract lists with no input
  // answers its 200, not 400, and one with required fields names each missing one.
  .use(async function absentQueryInput({ type, getRawInput, next }) {
    if (type !== 'query') return next();
    return next({ getRawInput: async () => (await getRawInput()) ?? {} });
  })
  .use(async function contractErrors({ next }) {
    const result = await next();
    if (result.ok || !(result.error.cause instanceof ApiProblem)) return result;
    const problem = result.error.cause;
    return {
      ...result,
      error: new TRPCError({ code: trpcCodeOf(problem.status), message: problem.message, cause: problem }),
    };
  });

/** The codes an agent route's sign-in answers (for `meta.errors`). */
export const AGENT_ERRORS: readonly ErrorCode[] = ['invalid_api_key', 'invalid_client'];
/** The codes an admin route's sign-in answers (for `meta.errors`). */
export const ADMIN_ERRORS: readonly ErrorCode[] = ['invalid_api_key', 'rbac_denied'];

/** An agent call: a key plus the client it was issued to (auth/agent.ts). */
export const agentProcedure = publicProcedure.use(async function requireAgent({ ctx, next }) {
  const caller = await authenticateAgent(ctx.deps.keys, ctx.headers, ctx.remoteAddress, ctx.logFields);
  if (!caller.ok) throw new ApiProblem(caller.error);
  return next({ ctx: caller.value });
});

/** Fails with 403 rbac_denied naming the scope, the contract's answer for a missing scope. */
export function requireScope(scopes: readonly string[], scope: string): void {
  if (!hasScope(scopes, scope)) {
    throw new ApiProblem(keyLacksScope(scope));
  }
}

/** An admin call: a key with scope `admin`, or a web console session (auth/admin.ts). */
export const adminProcedure = publicProcedure.use(async function requireAdmin({ ctx, type, next }) {
  const admin = await authenticateAdmin(ctx.deps, {
    headers: ctx.headers,
    remoteAddress: ctx.remoteAddress,
    logFields: ctx.logFields,
    changesState: type !== 'query',
  });
  if (!admin.ok) throw new ApiProblem(admin.error);
  requireScope(admin.value.scopes, SCOPE.admin);
  return next({ ctx: { principal: admin.value } });
});
