import { agentHeaders } from '../../../shared/schemas/headers.ts';
import { initiateOAuthInput, initiateOAuthOutput } from '../../../shared/schemas/oauth.ts';
import { SCOPE } from '../../auth/scopes.ts';
import { takeRateLimit } from '../../calls/call-tool.ts';
import { ApiProblem } from '../../errors.ts';
import { initiateOAuth } from '../../oauth/initiate.ts';
import { AGENT_ERRORS, agentProcedure, requireScope } from '../../trpc.ts';

/**
 * POST /initiateOAuth (docs/reference.md "End-user OAuth"): key → client → rate limit → scope
 * oauth:initiate → body → app → redirect URI. A flow start takes a unit of the key's rate limit
 * like a tool call: each one stores a state, and one key must not be able to store them unbounded.
 */
export const initiateOAuthProcedure = agentProcedure
  .use(async function requireOAuthInitiate({ ctx, next }) {
    const refused = takeRateLimit(ctx.deps, ctx.principal);
    if (refused) {
      ctx.deps.metrics.recordRateLimited();
      throw new ApiProblem(refused.body, refused.headers);
    }
    requireScope(ctx.principal.scopes, SCOPE.oauthInitiate);
    return next();
  })
  .meta({
    openapi: {
      method: 'POST',
      path: '/initiateOAuth',
      requestHeaders: agentHeaders,
      tags: ['oauth'],
      summary: 'Start an end-user authorization',
      description:
        "Answers the provider's authorization URL for the user to visit. The provider sends the browser " +
        'back to /handleOAuthCallback, which stores the grant and redirects to `clientRedirectUri` with ' +
        '`status=success` (or `status=error&reason=…`). The state lives 10 minutes and is single-use.',
      protect: true,
    },
    errors: [...AGENT_ERRORS, 'rate_limited', 'rbac_denied', 'redirect_uri_mismatch', 'app_not_found'],
    example: {
      appId: 'github',
      userId: 'user-42',
      clientRedirectUri: 'https://agent.example/oauth/done',
    },
  })
  .input(initiateOAuthInput)
  .output(initiateOAuthOutput)
  .mutation(async ({ ctx, input }) => {
    const outcome = await initiateOAuth(ctx.deps, ctx.clientId, input);
    if (!outcome.ok) throw new ApiProblem(outcome.error);
    return outcome.value;
  });
