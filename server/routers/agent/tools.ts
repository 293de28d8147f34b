import { apiError } from '../../../shared/errors.ts';
import { composeToolId } from '../../../shared/ids.ts';
import { listToolsInput, listToolsOutput, type ToolView } from '../../../shared/schemas/agent.ts';
import { agentHeaders } from '../../../shared/schemas/headers.ts';
import type { LoadedApp } from '../../apps/registry.ts';
import { canExecute } from '../../auth/scopes.ts';
import type { CompiledTool } from '../../catalog/catalog.ts';
import { LIMITS } from '../../config.ts';
import { ApiProblem } from '../../errors.ts';
import { type FoundTool, findTools } from '../../search/find-tools.ts';
import { AGENT_ERRORS, agentProcedure } from '../../trpc.ts';

/** Tools in a page when the caller names no `limit` (docs/reference.md "Agent endpoints"). */
const DEFAULT_PAGE = 1000;
/** … and when it searches with `q`: a model reads the first few. */
const DEFAULT_SEARCH_PAGE = 20;

/** Where a page starts: in catalog order, an app and a tool's index in it; in a ranking, an offset. */
type Position = { kind: 'catalog'; appId: string; index: number } | { kind: 'ranked'; offset: number };

/** Cursors are opaque to callers: base64url of `[appId, index]` or `[offset]`. */
function encodeCursor(position: Position): string {
  const value = position.kind === 'catalog' ? [position.appId, position.index] : [position.offset];
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

function decodeCursor(cursor: string): Position | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(value)) return null;
    const [first, second] = value as unknown[];
    const position: Position | null =
      value.length === 2 && typeof first === 'string' && isIndex(second)
        ? { kind: 'catalog', appId: first, index: second }
        : value.length === 1 && isIndex(first)
          ? { kind: 'ranked', offset: first }
          : null;
    // Only the exact text this server writes: no second spelling of one position.
    return position && encodeCursor(position) === cursor ? position : null;
  } catch {
    return null;
  }
}

const isIndex = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

function view(app: LoadedApp, compiled: CompiledTool): ToolView {
  const { tool } = compiled;
  const userAuth = app.auth.type === 'oauth2';
  return {
    toolId: composeToolId(app.appId, tool.name),
    appId: app.appId,
    name: tool.name,
    title: tool.summary ?? tool.name,
    method: tool.method,
    path: tool.documentPath ?? tool.pathTemplate,
    description: tool.description,
    parameters: tool.parametersSchema,
    requiresUserAuth: userAuth,
    scopes: userAuth ? tool.scopes : [],
  };
}

/** A search hit as the same view, with its score. */
function foundView({ appId, tool, requiresUserAuth, score }: FoundTool): ToolView {
  return {
    toolId: composeToolId(appId, tool.name),
    appId,
    name: tool.name,
    title: tool.summary ?? tool.name,
    method: tool.method,
    path: tool.path,
    description: tool.description,
    parameters: tool.parametersSchema,
    requiresUserAuth,
    scopes: requiresUserAuth ? tool.scopes : [],
    score,
  };
}

const badCursor = () =>
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
    const start = input.cursor === undefined ? null : decodeCursor(input.cursor);
    const q = input.q?.trim() ? input.q : undefined;
    if (input.cursor !== undefined && (start === null || (start.kind === 'ranked') !== (q !== undefined)))
      throw badCursor();
    const only = input.apps === undefined ? null : new Set(input.apps.split(',').map((id) => id.trim()));
    const admits = (appId: string) =>
      (input.appId === undefined || appId === input.appId) &&
      (only === null || only.has(appId)) &&
      canExecute(ctx.principal.scopes, appId);

    if (q !== undefined) {
      const offset = start?.kind === 'ranked' ? start.offset : 0;
      const limit = input.limit ?? DEFAULT_SEARCH_PAGE;
      const { found, more } = await findTools(ctx.deps, { q, admits, offset, limit });
      const tools: ToolView[] = [];
      let bytes = 0;
      for (const hit of found) {
        if (tools.length > 0 && bytes + hit.size > LIMITS.toolsPageBytes) break;
        bytes += hit.size;
        tools.push(foundView(hit));
      }
      const next = offset + tools.length;
      return more || tools.length < found.length
        ? { tools, next_cursor: encodeCursor({ kind: 'ranked', offset: next }) }
        : { tools };
    }

    const limit = input.limit ?? DEFAULT_PAGE;
    let bytes = 0;
    const from = start?.kind === 'catalog' ? start : null;
    const apps =
      input.appId !== undefined
        ? [await ctx.deps.apps.get(input.appId)]
        : only !== null
          ? await Promise.all([...only].sort().map((appId) => ctx.deps.apps.get(appId)))
          : await ctx.deps.apps.list();
    const tools: ToolView[] = [];
    for (const app of apps) {
      if (!app || !admits(app.appId)) continue;
      if (from && app.appId < from.appId) continue;
      let index = -1;
      for (const compiled of app.compiled.tools.values()) {
        index += 1;
        if (from && app.appId === from.appId && index < from.index) continue;
        // A page ends at `limit` tools or at a bounded size, whichever comes first (never empty).
        if (tools.length === limit || (tools.length > 0 && bytes + compiled.size > LIMITS.toolsPageBytes))
          return { tools, next_cursor: encodeCursor({ kind: 'catalog', appId: app.appId, index }) };
        bytes += compiled.size;
        tools.push(view(app, compiled));
      }
    }
    return { tools };
  });
