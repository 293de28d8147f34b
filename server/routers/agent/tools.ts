import { apiError } from '../../../shared/errors.ts';
import { composeToolId } from '../../../shared/ids.ts';
import { listToolsInput, listToolsOutput, type ToolView } from '../../../shared/schemas/agent.ts';
import { agentHeaders } from '../../../shared/schemas/headers.ts';
import type { LoadedApp } from '../../apps/registry.ts';
import { canExecute } from '../../auth/scopes.ts';
import { LIMITS } from '../../config.ts';
import { ApiProblem } from '../../errors.ts';
import { AGENT_ERRORS, agentProcedure } from '../../trpc.ts';

/** Tools in a page when the caller names no `limit` (docs/reference.md "Agent endpoints"). */
const DEFAULT_PAGE = 1000;

/** Where a page starts: an app and the index of a tool in its document order. */
interface Position {
  appId: string;
  index: number;
}

/** Cursors are opaque to callers: base64url of `[appId, index]`. */
function encodeCursor(position: Position): string {
  return Buffer.from(JSON.stringify([position.appId, position.index])).toString('base64url');
}

function decodeCursor(cursor: string): Position | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      typeof value[0] === 'string' &&
      Number.isSafeInteger(value[1]) &&
      (value[1] as number) >= 0 &&
      encodeCursor({ appId: value[0], index: value[1] as number }) === cursor
    ) {
      return { appId: value[0], index: value[1] as number };
    }
  } catch {}
  return null;
}

function view(
  app: LoadedApp,
  tool: { name: string; description: string; parametersSchema: Record<string, unknown>; scopes: string[] },
): ToolView {
  const userAuth = app.auth.type === 'oauth2';
  return {
    toolId: composeToolId(app.appId, tool.name),
    appId: app.appId,
    name: tool.name,
    description: tool.description,
    parameters: tool.parametersSchema,
    requiresUserAuth: userAuth,
    scopes: userAuth ? tool.scopes : [],
  };
}

/** GET /tools: the catalog of the apps this key may execute, searched with `q`, paged by `limit`/`cursor`. */
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
    errors: AGENT_ERRORS,
  })
  .input(listToolsInput)
  .output(listToolsOutput)
  .query(async ({ ctx, input }) => {
    const start = input.cursor === undefined ? null : decodeCursor(input.cursor);
    if (input.cursor !== undefined && start === null) {
      throw new ApiProblem(
        apiError('invalid_request', 'The cursor is not one this server gave.', {
          issues: [{ path: '/cursor', message: 'Must be the next_cursor of a previous page.' }],
        }),
      );
    }
    const words = (input.q ?? '').toLowerCase().split(/\s+/).filter(Boolean);
    const limit = input.limit ?? DEFAULT_PAGE;
    let bytes = 0;
    const apps = input.appId ? [await ctx.deps.apps.get(input.appId)] : await ctx.deps.apps.list();
    const tools: ToolView[] = [];
    for (const app of apps) {
      if (!app || !canExecute(ctx.principal.scopes, app.appId)) continue;
      if (start && app.appId < start.appId) continue;
      let index = -1;
      for (const compiled of app.compiled.tools.values()) {
        index += 1;
        if (start && app.appId === start.appId && index < start.index) continue;
        if (words.length > 0 && !compiled.matches(words)) continue;
        // A page ends at `limit` tools or at a bounded size, whichever comes first (never empty).
        if (tools.length === limit || (tools.length > 0 && bytes + compiled.size > LIMITS.toolsPageBytes))
          return { tools, next_cursor: encodeCursor({ appId: app.appId, index }) };
        bytes += compiled.size;
        tools.push(view(app, compiled.tool));
      }
    }
    return { tools };
  });
