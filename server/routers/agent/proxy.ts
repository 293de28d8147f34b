import { apiError } from '../../../shared/errors.ts';
import { HEADER } from '../../../shared/headers.ts';
import { proxyInput, proxyOutput } from '../../../shared/schemas/agent.ts';
import { headerValue } from '../../context.ts';
import { serviceCredentials } from '../../execute/credentials.ts';
import { authorizeAndValidate, resolveTool, runTool } from '../../execute/execute.ts';
import { userCredentials } from '../../execute/user-grant.ts';
import { ApiProblem } from '../../problem.ts';
import { agentProcedure } from '../../trpc.ts';

const USER_ID = /^[\s\S]{1,256}$/;

/** Rate limit comes right after key and client, before the body is looked at (CONTRACT §2 order). */
const limitedProcedure = agentProcedure.use(async function rateLimit({ ctx, next }) {
  const decision = ctx.deps.limiter.take(ctx.principal.keyId ?? 'admin', ctx.deps.clock.now());
  if (!decision.ok) {
    throw new ApiProblem(
      apiError('rate_limited', 'Too many calls with this API key; retry later.', { retry_after: decision.retryAfterSeconds }),
      { 'retry-after': String(decision.retryAfterSeconds) },
    );
  }
  return next();
});

function badHeader(message: string): ApiProblem {
  return new ApiProblem(apiError('invalid_request', message, { issues: [{ path: '', message }] }));
}

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

    const { app } = resolved.resolved;
    let credentials = {};
    if (app.auth.type === 'oauth2') {
      const userId = headerValue(ctx.headers, HEADER.userId);
      if (userId === undefined) throw badHeader('X-Service-User-Id is required: this tool acts for an end user.');
      if (!USER_ID.test(userId)) throw badHeader('X-Service-User-Id must be 1 to 256 characters.');
      const grant = await userCredentials(deps.db.prisma, deps.envelope, app, ctx.clientId, userId);
      if (!grant.ok) throw new ApiProblem(grant.body);
      credentials = grant.credentials;
    } else {
      credentials = await serviceCredentials(app);
    }
    const outcome = await runTool(resolved.resolved, input.parameters, credentials, ctx.startedAt, deps.config.upstreamTimeoutMs);
    if (!outcome.ok) throw new ApiProblem(outcome.body);
    return outcome.body;
  });
