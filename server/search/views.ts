/**
 * A tool as a search shows it: what `GET /tools` and MCP `search_tools` answer for a hit, stored
 * per tool (`catalog_tools`) when its app is compiled. A search answers its few hits from these
 * rows, so a server searching the whole APIs.guru collection never loads a catalog to show a
 * result (Microsoft Graph's alone is 45 MB).
 */

import type { Tool } from '../catalog/types.ts';
import type { PrismaClient } from '../db/generated/client.ts';

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

/** Characters of tool rows written per statement (see replaceToolRows). */
const ROWS_BATCH_CHARS = 256 * 1024;
/** A registration's transaction may take this long (thousands of rows on a busy embedded database). */
export const TOOL_ROWS_TIMEOUT_MS = 120_000;

/**
 * Replaces an app's tool rows, inside the caller's transaction, in statements of at most
 * ROWS_BATCH_CHARS: the embedded database runs on the event loop, and one statement of GitHub's
 * 3 MB of rows held every other request (a `/healthz` probe waited 2 s).
 */
export async function replaceToolRows(
  tx: Pick<PrismaClient, 'catalogTool'>,
  appId: string,
  views: ReadonlyArray<{ name: string; view: string }>,
): Promise<void> {
  await tx.catalogTool.deleteMany({ where: { appId } });
  let batch: Array<{ appId: string; name: string; view: string }> = [];
  let chars = 0;
  for (const { name, view } of views) {
    batch.push({ appId, name, view });
    chars += view.length;
    if (chars >= ROWS_BATCH_CHARS) {
      await tx.catalogTool.createMany({ data: batch });
      batch = [];
      chars = 0;
    }
  }
  if (batch.length > 0) await tx.catalogTool.createMany({ data: batch });
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
