import { listCallsInput, listCallsOutput } from '../../../shared/schemas/observe.ts';
import { ApiProblem } from '../../errors.ts';
import { callsPage } from '../../observe/call-log-query.ts';
import { ADMIN_ERRORS, adminProcedure, router } from '../../trpc.ts';

export const callsRouter = router({
  list: adminProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/admin/calls',
        tags: ['admin'],
        summary: 'The call log: one record per tool call on every surface, newest first',
        description:
          'Filters are exact matches; `since` is inclusive and `until` exclusive (RFC 3339). ' +
          'Pass `next_cursor` as `cursor` for the next, older page. Records hold no parameters, ' +
          'bodies or tokens; they are kept CALL_LOG_DAYS days and written within seconds of the call.',
        protect: true,
      },
      errors: ADMIN_ERRORS,
    })
    .input(listCallsInput)
    .output(listCallsOutput)
    .query(async ({ ctx, input }) => {
      const page = await callsPage(ctx.deps.db.prisma, input);
      if (!page.ok) throw new ApiProblem(page.error);
      return page.value;
    }),
});
