import { HEADER } from '../../../shared/headers.ts';
import { proxyInput, proxyOutput } from '../../../shared/schemas/agent.ts';
import { proxyHeaders } from '../../../shared/schemas/headers.ts';
import { admitCall, callTool } from '../../calls/call-tool.ts';
import { headerValue } from '../../context.ts';
import { ApiProblem } from '../../problem.ts';
import { authenticateAgent, publicProcedure } from '../../trpc.ts';

/** Key → client → rate limit, in the contract's order and in one middleware (see authenticateAgent). */
const limitedProcedure = publicProcedure.use(async function requireAgentWithinRate({
  ctx,
  next,
  getRawInput,
}) {
  const admitted = admitCall(ctx.deps, await authenticateAgent(ctx));
  if (!admitted.ok) throw new ApiProblem(admitted.error.body, admitted.error.headers);
  // Input parsing drops an own `__proto__` key (a pollution guard); the contract still wants the
  // unknown name reported, so look for it in the raw input.
  const raw = (await getRawInput()) as { parameters?: unknown } | undefined;
  const parameters = raw && typeof raw === 'object' ? raw.parameters : undefined;
  const protoParameter =
    parameters !== null && typeof parameters === 'object' && Object.hasOwn(parameters, '__proto__');
  return next({ ctx: { caller: admitted.value, protoParameter } });
});

const PROTO_ISSUE = {
  path: '/__proto__',
  message: 'Unknown parameter "__proto__": the tool has no parameter of that name.',
};

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
  })
  .input(proxyInput)
  .output(proxyOutput)
  .mutation(async ({ ctx, input }) => {
    const outcome = await callTool(ctx.deps, ctx.caller, {
      toolId: input.toolId,
      parameters: input.parameters,
      appId: headerValue(ctx.headers, HEADER.appId),
      userId: headerValue(ctx.headers, HEADER.userId),
      idempotencyKey: headerValue(ctx.headers, HEADER.idempotencyKey),
      earlierIssues: ctx.protoParameter ? [PROTO_ISSUE] : [],
      startedAt: ctx.startedAt,
      log: ctx.log,
      logFields: ctx.logFields,
    });
    if (!outcome.ok) throw new ApiProblem(outcome.error.body, outcome.error.headers);
    Object.assign(ctx.response.headers, outcome.value.headers);
    return outcome.value.body;
  });
