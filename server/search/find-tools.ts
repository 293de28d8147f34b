/**
 * The ranked tools of a task for one caller: the key's apps (narrowed by the caller's filter),
 * searched together, each hit joined to the tool as searches show it. One core for
 * `GET /tools?q=` (REST and tRPC) and MCP search mode's `search_tools`; it knows nothing of either.
 */
import type { AppDeps } from '../deps.ts';
import { readViews, type ToolShown } from './views.ts';

/** The deepest a ranked list is read (an offset past it finds nothing more). */
export const MAX_RANKED = 10_000;

export interface FoundTool {
  appId: string;
  tool: ToolShown;
  /** Whether the tool acts for the end user (its app is an oauth2 app). */
  requiresUserAuth: boolean;
  score: number;
  /** About how many characters the tool takes in an answer. */
  size: number;
}

export interface FindToolsInput {
  q: string;
  /** Which apps may answer (the key's scopes and the caller's filter). */
  admits: (appId: string) => boolean;
  /** Tools to skip from the top of the ranking, and how many to answer after them. */
  offset: number;
  limit: number;
}

/** The page of the ranking, and whether more tools follow it. */
export async function findTools(
  deps: Pick<AppDeps, 'search' | 'db'>,
  input: FindToolsInput,
): Promise<{ found: FoundTool[]; more: boolean }> {
  const wanted = Math.min(MAX_RANKED, input.offset + input.limit + 1);
  const hits = await deps.search.search(input.q, input.admits, wanted);
  const page = hits.slice(input.offset, input.offset + input.limit);
  const names = new Map<string, string[]>();
  for (const hit of page) names.set(hit.appId, [...(names.get(hit.appId) ?? []), hit.name]);
  const views = await readViews(deps.db.prisma, names);
  const found: FoundTool[] = [];
  for (const hit of page) {
    const shown = views.get(`${hit.appId}:::${hit.name}`);
    // A tool removed since its segment was read is left out.
    if (shown)
      found.push({
        appId: hit.appId,
        tool: shown.tool,
        requiresUserAuth: hit.requiresUserAuth,
        score: hit.score,
        size: shown.size,
      });
  }
  return { found, more: hits.length > input.offset + input.limit };
}
