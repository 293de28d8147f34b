import { listToolsInput, listToolsOutput } from '../../../shared/schemas/agent.ts';
import { listTools } from '../../apps/list-tools.ts';
import { ADMIN_ERRORS, adminProcedure, router } from '../../trpc.ts';
import { badCursor } from '../agent/tools.ts';

/**
 * GET /admin/tools: GET /tools for an administrator (the web console browses and searches every
 * app's tools with it): the same query, ranking (§10 search) and answer, over every app, with no
 * client and no execute scope involved.
 */
export const adminToolsRouter = router({
  list: adminProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/admin/tools',
        tags: ['admin'],
        summary: "Every app's tools, or those that fit a task in free text (ranked), as GET /tools answers",
        protect: true,
      },
      errors: ADMIN_ERRORS,
    })
    .input(listToolsInput)
    .output(listToolsOutput)
    .query(async ({ ctx, input }) => {
      const page = await listTools(ctx.deps, input, null);
      if (!page.ok) throw badCursor();
      return page.value;
    }),
});
