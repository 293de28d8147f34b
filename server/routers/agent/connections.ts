import { apiError } from '../../../shared/errors.ts';
import { HEADER } from '../../../shared/headers.ts';
import { okOutput } from '../../../shared/schemas/admin.ts';
import { userHeaders } from '../../../shared/schemas/headers.ts';
import {
  type ConnectionStatus,
  deleteConnectionInput,
  listConnectionsInput,
  listConnectionsOutput,
} from '../../../shared/schemas/oauth.ts';
import { SCOPE } from '../../auth/scopes.ts';
import { checkUserHeader } from '../../calls/checks.ts';
import { type Context, headerValue } from '../../context.ts';
import { ApiProblem } from '../../errors.ts';
import { listGrants } from '../../oauth/grants.ts';
import { disconnect } from '../../oauth/revoke.ts';
import { actorOf } from '../../observe/audit.ts';
import { AGENT_ERRORS, agentProcedure, requireScope, router } from '../../trpc.ts';

/** X-Service-User-Id is required here: connections are always one user's. */
function userOf(ctx: Context): string {
  const userId = headerValue(ctx.headers, HEADER.userId);
  const bad = checkUserHeader(userId, true);
  if (bad) throw new ApiProblem(bad);
  return userId as string;
}

export const connectionsRouter = router({
  list: agentProcedure
    .use(async function requireConnectionsRead({ ctx, next }) {
      requireScope(ctx.principal.scopes, SCOPE.connectionsRead);
      return next();
    })
    .meta({
      openapi: {
        method: 'GET',
        path: '/connections',
        requestHeaders: userHeaders,
        tags: ['oauth'],
        summary: "List the user's connections (grants), without tokens",
        protect: true,
      },
      errors: [...AGENT_ERRORS, 'rbac_denied'],
    })
    .input(listConnectionsInput)
    .output(listConnectionsOutput)
    .query(async ({ ctx, input }) => {
      const rows = await listGrants(ctx.deps.db.prisma, ctx.clientId, userOf(ctx), input.appId);
      return {
        connections: rows.map((row) => ({
          appId: row.appId,
          status: row.status as ConnectionStatus,
          scopes: row.scopes,
          expiresAt: row.expiresAt?.toISOString() ?? null,
          updatedAt: row.updatedAt.toISOString(),
        })),
      };
    }),

  remove: agentProcedure
    .use(async function requireConnectionsWrite({ ctx, next }) {
      requireScope(ctx.principal.scopes, SCOPE.connectionsWrite);
      return next();
    })
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/connections/{appId}',
        requestHeaders: userHeaders,
        tags: ['oauth'],
        summary: "Forget the user's grant for an app, revoking it at the provider",
        protect: true,
      },
      errors: [...AGENT_ERRORS, 'rbac_denied', 'not_found'],
    })
    .input(deleteConnectionInput)
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      const outcome = await disconnect(
        ctx.deps,
        {
          clientId: ctx.clientId,
          userId: userOf(ctx),
          appId: input.appId,
        },
        actorOf(ctx.principal),
      );
      if (!outcome.ok)
        throw new ApiProblem(apiError('not_found', 'This user has no connection to this app.'));
      return { ok: true as const };
    }),
});
