import { composeToolId } from '../../../shared/ids.ts';
import { listToolsInput, listToolsOutput, type ToolView } from '../../../shared/schemas/agent.ts';
import { agentHeaders } from '../../../shared/schemas/headers.ts';
import { canExecute } from '../../auth/scopes.ts';
import { agentProcedure } from '../../trpc.ts';

/** GET /tools: the catalog of the apps this key may execute. */
export const listToolsProcedure = agentProcedure
  .meta({
    openapi: {
      method: 'GET',
      path: '/tools',
      requestHeaders: agentHeaders,
      tags: ['agent'],
      summary: 'List the tools this API key may run, with their parameter schemas',
      protect: true,
    },
  })
  .input(listToolsInput)
  .output(listToolsOutput)
  .query(async ({ ctx, input }) => {
    const apps = input.appId ? [await ctx.deps.apps.get(input.appId)] : await ctx.deps.apps.list();
    const tools: ToolView[] = [];
    for (const app of apps) {
      if (!app || !canExecute(ctx.principal.scopes, app.appId)) continue;
      const userAuth = app.auth.type === 'oauth2';
      for (const { tool } of app.compiled.tools.values()) {
        tools.push({
          toolId: composeToolId(app.appId, tool.name),
          appId: app.appId,
          name: tool.name,
          description: tool.description,
          parameters: tool.parametersSchema,
          requiresUserAuth: userAuth,
          scopes: userAuth ? tool.scopes : [],
        });
      }
    }
    return { tools };
  });
