/**
 * A tool as a search shows it: what `GET /tools` and MCP `search_tools` answer for a hit, stored
 * per tool (`catalog_tools`) when its app is compiled. A search answers its few hits from these
 * rows, so a server searching the whole APIs.guru collection never loads a catalog to show a
 * result (Microsoft Graph's alone is 45 MB).
 */

import type { Tool } from '../catalog/types.ts';
import type { PrismaClient } from '../db/generated/client.ts';
import { turn } from '../db/turn.ts';

/** The parts of a tool a search result shows. */
export interface ToolShown {
  name: string;
  operationId: string | null;
  method: string;
  /** The path as the document writes it. */
  path: string;
  pathTemplate: string;
  summary: string | null;
  operationDescription: string | null;
  /** Summary and description, else `<METHOD> <path>`. */
  description: string;
  scopes: string[];
  parametersSchema: Record<string, unknown>;
}

/** A tool's row text (built on the compile worker). */
export function toolViewText(tool: Tool): string {
  const shown: ToolShown = {
    name: tool.name,
    operationId: tool.operationId,
    method: tool.method,
    path: tool.documentPath ?? tool.pathTemplate,
    pathTemplate: tool.pathTemplate,
    summary: tool.summary,
    operationDescription: tool.operationDescription,
    description: tool.description,
    scopes: tool.scopes,
    parametersSchema: tool.parametersSchema,
  };
  return JSON.stringify(shown);
}

/**
 * Characters of tool rows written per statement (see replaceToolRows). Measured on PGlite (GitHub's
 * 1,200 rows, 2.7 MB): 256 KiB statements took 50–200 ms each, 32 KiB ones 5–25 ms, for about the
 * same total.
 */
const ROWS_BATCH_CHARS = 32 * 1024;
/** A registration's transaction may take this long (thousands of rows on a busy embedded database). */
export const TOOL_ROWS_TIMEOUT_MS = 120_000;

/**
 * Replaces an app's tool rows, inside the caller's transaction, in statements of at most
 * ROWS_BATCH_CHARS, the event loop turning between them (server/db/turn.ts): on the embedded
 * database one statement of GitHub's rows held every other request for seconds. Plain SQL, the
 * rows as two arrays: through Prisma's createMany, its query compiler took half as long again as
 * the database's own writing (profile of GitHub's registration).
 */
export async function replaceToolRows(
  tx: Pick<PrismaClient, 'catalogTool' | '$executeRaw'>,
  appId: string,
  views: ReadonlyArray<{ name: string; view: string }>,
): Promise<void> {
  await tx.catalogTool.deleteMany({ where: { appId } });
  for (let at = 0; at < views.length; ) {
    const names: string[] = [];
    const texts: string[] = [];
    for (let chars = 0; at < views.length && chars < ROWS_BATCH_CHARS; at += 1) {
      const { name, view } = views[at] as { name: string; view: string };
      names.push(name);
      texts.push(view);
      chars += view.length;
    }
    await turn();
    await tx.$executeRaw`INSERT INTO catalog_tools (app_id, name, view)
      SELECT ${appId}, name, view FROM unnest(${names}::text[], ${texts}::text[]) AS row(name, view)`;
  }
}

/**
 * The shown tools of `wanted` (app id → tool names), by `appId:::name`, with the row's size in
 * characters. A name missing from the answer was removed or renamed since its segment was read.
 */
export async function readViews(
  prisma: PrismaClient,
  wanted: ReadonlyMap<string, readonly string[]>,
): Promise<Map<string, { tool: ToolShown; size: number }>> {
  const shown = new Map<string, { tool: ToolShown; size: number }>();
  if (wanted.size === 0) return shown;
  const rows = await prisma.catalogTool.findMany({
    where: { OR: [...wanted].map(([appId, names]) => ({ appId, name: { in: [...names] } })) },
    select: { appId: true, name: true, view: true },
  });
  for (const row of rows) {
    try {
      shown.set(`${row.appId}:::${row.name}`, {
        tool: JSON.parse(row.view) as ToolShown,
        size: row.view.length,
      });
    } catch {
      // An unreadable row is left out, like a removed tool.
    }
  }
  return shown;
}
