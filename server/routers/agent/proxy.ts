import { HEADER } from '../../../shared/headers.ts';
import { userIdSchema } from '../../../shared/ids.ts';
import {
  type ProxyInput,
  type ProxySuccess,
  proxyInput,
  proxyOutput,
} from '../../../shared/schemas/agent.ts';
import { proxyHeaders } from '../../../shared/schemas/headers.ts';
import { authenticateAgent } from '../../auth/agent.ts';
import { type CallSite, logCall } from '../../calls/call-record.ts';
import { type AdmittedCaller, admitCall, callTool } from '../../calls/call-tool.ts';
import { droppedParameterIssues } from '../../calls/checks.ts';
import { type Context, headerValue } from '../../context.ts';
import { ApiProblem, inputProblem } from '../../errors.ts';
import { problemBody } from '../../http/problem.ts';
import { AGENT_ERRORS, publicProcedure } from '../../trpc.ts';

/** What the middleware lets through to the resolver. */
interface Admitted {
  caller: AdmittedCaller;
  /** The raw parameters had an own `__proto__` key, which input parsing drops. */
  protoParameter: boolean;
  site: CallSite;
}

/** Key → client → rate limit, in the contract's order; then the raw input's `__proto__` check. */
async function admit(ctx: Context, raw: unknown): Promise<Admitted> {
  const caller = await authenticateAgent(ctx.deps.keys, ctx.headers, ctx.remoteAddress, ctx.logFields);
  if (!caller.ok) throw new ApiProblem(caller.error);
  const site = callSite(ctx);
  const admitted = admitCall(ctx.deps, caller.value, site, askedToolId(raw));
  if (!admitted.ok) throw new ApiProblem(admitted.error.body, admitted.error.headers);
  // Input parsing drops an own `__proto__` key (a pollution guard); the contract still wants the
  // unknown name reported, so look for it in the raw input.
  const parameters =
    raw && typeof raw === 'object' ? (raw as { parameters?: unknown }).parameters : undefined;
  const protoParameter =
    parameters !== null && typeof parameters === 'object' && Object.hasOwn(parameters, '__proto__');
  return { caller: admitted.value, protoParameter, site };
}

/** The request as the call log names it: its surface, id, arrival and user. */
function callSite(ctx: Context): CallSite {
  const userId = headerValue(ctx.headers, HEADER.userId);
  return {
    surface: ctx.surface,
    requestId: ctx.requestId,
    startedAt: ctx.startedAt,
    // Only a user id of the contract's shape is kept (the core refuses any other later).
    userId: userId !== undefined && userIdSchema.safeParse(userId).success ? userId : undefined,
  };
}

/** The body's toolId when it is one of the contract's shape, for a call refused before parsing. */
function askedToolId(raw: unknown): string | undefined {
  const toolId = raw && typeof raw === 'object' ? (raw as { toolId?: unknown }).toolId : undefined;
  return proxyInput.shape.toolId.safeParse(toolId).success ? (toolId as string) : undefined;
}

/** The resolver: the parsed input through the tool-call core, its outcome as output or ApiProblem. */
async function run(ctx: Context, admitted: Admitted, input: ProxyInput): Promise<ProxySuccess> {
  const { site } = admitted;
  // The site's fields one by one, not `...admitted.site` followed by `userId` again: that literal
  // cost 20 µs more CPU per call (1.29× → 1.08× of the build before the call log, ab.ts;
  // BENCHMARKS.md), most likely an object V8 keeps in its slow dictionary form, read all call long.
  const outcome = await callTool(ctx.deps, admitted.caller, {
    surface: site.surface,
    requestId: site.requestId,
    startedAt: site.startedAt,
    toolId: input.toolId,
    parameters: input.parameters,
    appId: headerValue(ctx.headers, HEADER.appId),
    userId: headerValue(ctx.headers, HEADER.userId),
    idempotencyKey: headerValue(ctx.headers, HEADER.idempotencyKey),
    earlierIssues: droppedParameterIssues(admitted.protoParameter),
    log: ctx.log,
    logFields: ctx.logFields,
  });
  if (!outcome.ok) throw new ApiProblem(outcome.error.body, outcome.error.headers);
  Object.assign(ctx.response.headers, outcome.value.headers);
  return outcome.value.body;
}

/**
 * Key → client → rate limit in one middleware: a level of its own per step would cost tRPC's
 * context copy per level, which the bench profile shows on the hot path.
 */
const limitedProcedure = publicProcedure.use(async function requireAgentWithinRate({
  ctx,
  next,
  getRawInput,
}) {
  const admitted = await admit(ctx, await getRawInput());
  const result = await next({ ctx: admitted });
  // The core logs every call it ran; what failed before it (the input's shape) is logged here.
  if (!result.ok && !(result.error.cause instanceof ApiProblem)) {
    const code = problemBody(result.error, ctx.deps.config.maxBodyBytes).error;
    logCall(ctx.deps, admitted.caller, admitted.site, { outcome: code });
  }
  return result;
});

/**
 * POST /proxyV2: a thin adapter over the tool-call core (server/calls). Key, client and rate limit
 * in the middleware, body shape by the input schema, everything else in `callTool`.
 */
export const proxyProcedure = limitedProcedure
  .meta({
    openapi: {
      method: 'POST',
      path: '/proxyV2',
      requestHeaders: proxyHeaders,
      tags: ['agent'],
      summary: 'Run a tool',
      description:
        'Runs `<appId>:::<toolName>` (or a bare tool name with X-Service-App-Id) with `parameters` validated ' +
        "against the tool's JSON Schema, and answers the normalized envelope.",
      protect: true,
    },
    errors: [
      ...AGENT_ERRORS,
      'invalid_parameters',
      'auth_required',
      'rbac_denied',
      'tool_not_found',
      'idempotency_in_progress',
      'idempotency_key_reused',
      'rate_limited',
      'upstream_error',
      'upstream_unreachable',
      'upstream_too_large',
      'upstream_timeout',
    ],
    direct: serveProxy,
    // The repository's example app (examples/), as the README's walk-through runs it.
    example: { toolId: 'pets:::getPetById', parameters: { petId: 1 } },
    successExample: {
      ok: true,
      data: { id: 1, name: 'Rex', tag: 'dog' },
      meta: { tool_id: 'pets:::getPetById', duration_ms: 12, provider: 'example.pets' },
    },
    successHeaders: {
      'X-Service-Idempotent-Replayed': {
        description:
          '`true` when this is the stored answer of an earlier request with the same idempotency key.',
        schema: { type: 'string', enum: ['true'] },
      },
    },
  })
  .input(proxyInput)
  .output(proxyOutput)
  .mutation(({ ctx, input }) => run(ctx, ctx, input));

/**
 * REST `POST /proxyV2` without tRPC's caller: the same steps as the procedure above, in its order
 * (middleware, input schema, resolver), minus the context copies tRPC makes at every level, which
 * the bench profile shows on the hot path. The input schema is the procedure's own (a test holds
 * them to each other), so /openapi.json, tRPC and REST keep one definition. The output is not
 * parsed again here: the core builds the envelope itself (typed as the output schema's type), and
 * the tRPC procedure, which does parse it, answers the same bodies in the tests.
 */
export async function serveProxy(ctx: Context, raw: unknown): Promise<ProxySuccess> {
  const admitted = await admit(ctx, raw);
  const input = proxyInput.safeParse(raw);
  if (!input.success) {
    const problem = inputProblem(input.error.issues);
    logCall(ctx.deps, admitted.caller, admitted.site, { outcome: problem.error, toolId: askedToolId(raw) });
    throw new ApiProblem(problem);
  }
  return run(ctx, admitted, input.data);
}
