import { composeToolId } from '../../shared/ids.ts';
import type { ToolView } from '../../shared/schemas/agent.ts';
import { canExecute } from '../auth/scopes.ts';
import type { CompiledTool } from '../catalog/catalog.ts';
import { LIMITS } from '../config.ts';
import type { AppDeps } from '../deps.ts';
import { err, ok, type Result } from '../result.ts';
import { type FoundTool, findTools } from '../search/find-tools.ts';
import type { LoadedApp } from './registry.ts';

/**
 * The catalog as pages of tool views (docs/reference.md "Agent endpoints", "Tool search"): in
 * catalog order, or ranked by relevance to `q`; paged by `limit`/`cursor` and by size. GET /tools
 * lists what an agent's key may execute; GET /admin/tools (the web console) lists every app.
 */

export interface ListToolsQuery {
  appId?: string;
  apps?: string;
  q?: string;
  limit?: number;
  cursor?: string;
}

export interface ToolsPage {
  tools: ToolView[];
  next_cursor?: string;
}

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

/**
 * One page of tools; `scopes` are the caller's key's (only the apps it may execute), or null for an
 * admin, who sees every app. Fails only on a cursor this server did not give.
 */
export async function listTools(
  deps: AppDeps,
  input: ListToolsQuery,
  scopes: readonly string[] | null,
): Promise<Result<ToolsPage, 'bad_cursor'>> {
  const start = input.cursor === undefined ? null : decodeCursor(input.cursor);
  const q = input.q?.trim() ? input.q : undefined;
  if (input.cursor !== undefined && (start === null || (start.kind === 'ranked') !== (q !== undefined)))
    return err('bad_cursor');
  const only = input.apps === undefined ? null : new Set(input.apps.split(',').map((id) => id.trim()));
  const admits = (appId: string) =>
    (input.appId === undefined || appId === input.appId) &&
    (only === null || only.has(appId)) &&
    (scopes === null || canExecute(scopes, appId));

  if (q !== undefined) {
    const offset = start?.kind === 'ranked' ? start.offset : 0;
    const limit = input.limit ?? DEFAULT_SEARCH_PAGE;
    const { found, more } = await findTools(deps, { q, admits, offset, limit });
    const tools: ToolView[] = [];
    let bytes = 0;
    for (const hit of found) {
      if (tools.length > 0 && bytes + hit.size > LIMITS.toolsPageBytes) break;
      bytes += hit.size;
      tools.push(foundView(hit));
    }
    const next = offset + tools.length;
    return ok(
      more || tools.length < found.length
        ? { tools, next_cursor: encodeCursor({ kind: 'ranked', offset: next }) }
        : { tools },
    );
  }

  const limit = input.limit ?? DEFAULT_PAGE;
  let bytes = 0;
  const from = start?.kind === 'catalog' ? start : null;
  const apps =
    input.appId !== undefined
      ? [await deps.apps.get(input.appId)]
      : only !== null
        ? await Promise.all([...only].sort().map((appId) => deps.apps.get(appId)))
        : await deps.apps.list();
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
        return ok({ tools, next_cursor: encodeCursor({ kind: 'catalog', appId: app.appId, index }) });
      bytes += compiled.size;
      tools.push(view(app, compiled));
    }
  }
  return ok({ tools });
}
