import { callStatsInput, callStatsOutput } from '../../../shared/schemas/admin.ts';
import { callStats } from '../../observe/call-stats.ts';
import { ADMIN_ERRORS, adminProcedure, router } from '../../trpc.ts';

/** GET /admin/calls/stats: the web console overview's figures, aggregated in the database. */
export const callStatsRouter = router({
  get: adminProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/admin/calls/stats',
        tags: ['admin'],
        summary:
          'Calls per minute by outcome, p50/p99 duration and top errors of the last minutes (the console overview)',
        protect: true,
      },
      errors: ADMIN_ERRORS,
    })
    .input(callStatsInput)
    .output(callStatsOutput)
    .query(({ ctx, input }) => callStats(ctx.deps.db.prisma, ctx.deps.clock.now(), input)),
});
