/**
 * The ranked tools of a task for one caller: the key's apps (narrowed by the caller's filter),
 * searched together, each hit joined to its loaded tool. One core for `GET /tools?q=` (REST and
 * tRPC) and MCP search mode's `search_tools`; it knows nothing of either.
 */

import type { LoadedApp } from '../apps/registry.ts';
import type { CompiledTool } from '../catalog/catalog.ts';
import type { AppDeps } from '../deps.ts';

/** The deepest a ranked list is read (an offset past it finds nothing more). */
export const MAX_RANKED = 10_000;

export interface FoundTool {
  app: LoadedApp;
  tool: CompiledTool;
  score: number;
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
  deps: Pick<AppDeps, 'search' | 'apps'>,
  input: FindToolsInput,
): Promise<{ found: FoundTool[]; more: boolean }> {
  const wanted = Math.min(MAX_RANKED, input.offset + input.limit + 1);
  const hits = await deps.search.search(input.q, input.admits, wanted);
  const page = hits.slice(input.offset, input.offset + input.limit);
  const found: FoundTool[] = [];
  for (const hit of page) {
    const app = await deps.apps.get(hit.appId);
    const tool = app?.compiled.tools.get(hit.name);
    // An app replaced or removed since its segment was read: its hit is left out.
    if (app && tool) found.push({ app, tool, score: hit.score });
  }
  return { found, more: hits.length > input.offset + input.limit };
}
