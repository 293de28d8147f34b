import { apiError } from '../../../shared/errors.ts';
import {
  listAdminConnectionsInput,
  listAdminConnectionsOutput,
  okOutput,
  removeAdminConnectionInput,
} from '../../../shared/schemas/admin.ts';
import { listAllConnections } from '../../admin/connections.ts';
import { ApiProblem } from '../../errors.ts';
import { disconnect } from '../../oauth/revoke.ts';
import { actorOf } from '../../observe/audit.ts';
import { ADMIN_ERRORS, adminProcedure, router } from '../../trpc.ts';
import { badCursor } from '../agent/tools.ts';

/**
 * End users' connections for an administrator (the web console's "connections by user"): every
 * client's grants, and forgetting one exactly as DELETE /connections/{appId} does for the agent
 * (revoked at the provider first when the app can).
 */
export const adminConnectionsRouter = router({
  list: adminProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/admin/connections',
        tags: ['admin'],
        summary: "List end users' connections (grants) of every client, without tokens",
        protect: true,
      },
      errors: ADMIN_ERRORS,
    })
    .input(listAdminConnectionsInput)
    .output(listAdminConnectionsOutput)
    .query(async ({ ctx, input }) => {
      const page = await listAllConnections(ctx.deps.db.prisma, input);
      if (!page.ok) throw badCursor();
      return page.value;
    }),

  remove: adminProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/admin/connections',
        tags: ['admin'],
        summary:
          "Forget one user's grant for an app (query clientId, userId, appId), revoking it at the provider",
        protect: true,
      },
      errors: [...ADMIN_ERRORS, 'not_found'],
    })
    .input(removeAdminConnectionInput)
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      const outcome = await disconnect(ctx.deps, input, actorOf(ctx.principal));
      if (!outcome.ok)
        throw new ApiProblem(apiError('not_found', 'This user has no connection to this app.'));
      return { ok: true as const };
    }),
});
