import { apiError, type ErrorBody, statusOf } from '../../../shared/errors.ts';
import { HEADER } from '../../../shared/headers.ts';
import { type ProxySuccess, proxyInput, proxyOutput } from '../../../shared/schemas/agent.ts';
import { proxyHeaders } from '../../../shared/schemas/headers.ts';
import { headerValue } from '../../context.ts';
import { authorizeAndValidate, type ExecuteOutcome, resolveTool } from '../../execute/execute.ts';
import { authorizeAndRun, checkUserHeader } from '../../execute/run.ts';
import { requestFingerprint } from '../../idempotency/fingerprint.ts';
import { checkIdempotencyKey } from '../../idempotency/key.ts';
import { scopeOf } from '../../idempotency/service.ts';
import { ApiProblem } from '../../problem.ts';
import { authenticateAgent, publicProcedure } from '../../trpc.ts';

/** Key → client → rate limit, in the contract's order and in one middleware (see authenticateAgent). */
const limitedProcedure = publicProcedure.use(async function requireAgentWithinRate({
  ctx,
  next,
  getRawInput,
}) {
  const agent = await authenticateAgent(ctx);
  const decision = ctx.deps.limiter.take(agent.principal.keyId ?? 'admin', ctx.deps.clock.now());
  if (!decision.ok) {
    throw new ApiProblem(
      apiError('rate_limited', 'Too many calls with this API key; retry later.', {
        retry_after: decision.retryAfterSeconds,
      }),
      { 'retry-after': String(decision.retryAfterSeconds) },
    );
  }
  // Input parsing drops an own `__proto__` key (a pollution guard); the contract still wants the
  // unknown name reported, so look for it in the raw input.
  const raw = (await getRawInput()) as { parameters?: unknown } | undefined;
  const parameters = raw && typeof raw === 'object' ? raw.parameters : undefined;
  const protoParameter =
    parameters !== null && typeof parameters === 'object' && Object.hasOwn(parameters, '__proto__');
  return next({ ctx: { ...agent, protoParameter } });
});

const PROTO_ISSUE = {
  path: '/__proto__',
  message: 'Unknown parameter "__proto__": the tool has no parameter of that name.',
};

/**
 * POST /proxyV2. Checks in the contract's order: key → client → rate limit → body shape → tool →
 * caller scope → parameters → idempotency → user authorization → upstream. With
 * X-Service-Idempotency-Key the last two steps run at most once per (API key, key): server/idempotency.
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
    const { deps } = ctx;
    const resolved = await resolveTool(deps.apps, input.toolId, headerValue(ctx.headers, HEADER.appId));
    if (!resolved.ok) throw new ApiProblem(resolved.body);
    const denied = authorizeAndValidate(
      ctx.principal,
      resolved.resolved,
      input.parameters,
      ctx.protoParameter ? [PROTO_ISSUE] : [],
    );
    if (denied) throw new ApiProblem(denied);
    const userId = headerValue(ctx.headers, HEADER.userId);
    const badUser = checkUserHeader(userId, resolved.resolved.app.auth.type === 'oauth2');
    if (badUser) throw new ApiProblem(badUser);

    const idempotencyKey = headerValue(ctx.headers, HEADER.idempotencyKey);
    const badKey = checkIdempotencyKey(idempotencyKey);
    if (badKey) throw new ApiProblem(badKey);

    const { toolId, app } = resolved.resolved;
    const run = async (): Promise<RunAnswer> => {
      const outcome = await authorizeAndRun(
        deps,
        resolved.resolved,
        { clientId: ctx.clientId, userId },
        input.parameters,
        ctx.startedAt,
      );
      return { status: outcome.ok ? 200 : statusOf(outcome.body.error), body: outcome.body, outcome };
    };
    if (idempotencyKey === undefined) return settle((await run()).outcome);

    const result = await deps.idempotency.run(
      { scope: scopeOf(ctx.principal.keyId), key: idempotencyKey },
      requestFingerprint({ toolId, appId: app.appId, userId, parameters: input.parameters }),
      run,
      ctx.log,
    );
    switch (result.kind) {
      case 'run':
        return settle(result.answer.outcome);
      case 'replay': {
        // The stored answer, byte for byte: a 200 body, or the stored 502/504 error body.
        const replayed = { [HEADER.idempotentReplayed]: 'true' };
        if (result.answer.status !== 200) throw new ApiProblem(result.answer.body as ErrorBody, replayed);
        Object.assign(ctx.response.headers, replayed);
        return result.answer.body as ProxySuccess;
      }
      case 'conflict':
        throw new ApiProblem(
          apiError(
            'idempotency_key_reused',
            'This idempotency key was already used with a different request.',
          ),
        );
      case 'in_progress':
        throw new ApiProblem(
          apiError(
            'idempotency_in_progress',
            'A request with this idempotency key is still running; retry later.',
          ),
        );
    }
  });

/** The run step's outcome with the status it answers, as idempotency stores it. */
interface RunAnswer {
  status: number;
  body: unknown;
  outcome: ExecuteOutcome;
}

function settle(outcome: ExecuteOutcome): ProxySuccess {
  if (!outcome.ok) throw new ApiProblem(outcome.body);
  return outcome.body;
}
