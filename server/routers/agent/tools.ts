import { apiError } from '../../../shared/errors.ts';
import { listToolsInput, listToolsOutput } from '../../../shared/schemas/agent.ts';
import { agentHeaders } from '../../../shared/schemas/headers.ts';
import { listTools } from '../../apps/list-tools.ts';
import { ApiProblem } from '../../errors.ts';
import { AGENT_ERRORS, agentProcedure } from '../../trpc.ts';

export const badCursor = () =>
  new ApiProblem(
    apiError('invalid_request', 'The cursor is not one this server gave.', {
      issues: [{ path: '/cursor', message: 'Must be the next_cursor of a previous page.' }],
    }),
  );

/**
 * GET /tools: the catalog of the apps this key may execute, in catalog order, or ranked by
 * relevance to `q` (docs/reference.md "Tool search"); paged by `limit`/`cursor` and by size.
 */
export const listToolsProcedure = agentProcedure
  .meta({
    openapi: {
      method: 'GET',
      path: '/tools',
      requestHeaders: agentHeaders,
      tags: ['agent'],
      summary: 'List the tools this API key may run, or find them by a task in free text (ranked)',
      protect: true,
    },
    errors: AGENT_ERRORS,
  })
  .input(listToolsInput)
  .output(listToolsOutput)
  .query(async ({ ctx, input }) => {
    const page = await listTools(ctx.deps, input, ctx.principal.scopes);
    if (!page.ok) throw badCursor();
    return page.value;
  });
