import { apiError } from '../../../shared/errors.ts';
import { HEADER } from '../../../shared/headers.ts';
import { proxyInput, proxyOutput } from '../../../shared/schemas/agent.ts';
import { headerValue } from '../../context.ts';
import { authorizeAndValidate, resolveTool } from '../../execute/execute.ts';
import { authorizeAndRun, checkUserHeader } from '../../execute/run.ts';
import { ApiProblem } from '../../problem.ts';
import { agentProcedure } from '../../trpc.ts';

/** Rate limit comes right after key and client, before the body is looked at (CONTRACT §2 order). */
const limitedProcedure = agentProcedure.use(async function rateLimit({ ctx, next }) {
  const decision = ctx.deps.limiter.take(ctx.principal.keyId ?? 'admin', ctx.deps.clock.now());
  if (!decision.ok) {
    throw new ApiProblem(
      apiError('rate_limited', 'Too many calls with this API key; retry later.', {
        retry_after: decision.retryAfterSeconds,
      }),
      { 'retry-after': String(decision.retryAfterSeconds) },
    );
  }
  return next();
});

/**
 * POST /proxyV2. Checks in the contract's order: key → client → rate limit → body shape → tool →
 * caller scope → parameters → idempotency → user authorization → upstream.
 */
export const proxyProcedure = limitedProcedure
  .meta({
    openapi: {
      method: 'POST',
      path: '/proxyV2',
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
    const denied = authorizeAndValidate(ctx.principal, resolved.resolved, input.parameters);
    if (denied) throw new ApiProblem(denied);
    const userId = headerValue(ctx.headers, HEADER.userId);
    const badUser = checkUserHeader(userId, resolved.resolved.app.auth.type === 'oauth2');
    if (badUser) throw new ApiProblem(badUser);

    const outcome = await authorizeAndRun(
      deps,
      resolved.resolved,
      { clientId: ctx.clientId, userId },
      input.parameters,
      ctx.startedAt,
    );
    if (!outcome.ok) throw new ApiProblem(outcome.body);
    return outcome.body;
  });
