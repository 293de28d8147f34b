import { createHash } from 'node:crypto';
import { composeToolId, ID_PATTERN } from '../../shared/ids.ts';
import { MODEL_TOOL_NAME_MAX, MODEL_TOOL_SEPARATOR, modelToolName } from '../../shared/tool-names.ts';
import type { AppRegistry, LoadedApp } from '../apps/registry.ts';
import type { Principal } from '../auth/authenticate.ts';
import { canExecute } from '../auth/scopes.ts';
import type { Tool as CatalogTool } from '../catalog/types.ts';

/**
 * The catalog as an MCP client sees it (docs/reference.md "MCP"): exactly the tools `GET /tools` lists for the
 * key (narrowed by `apps`), each under its model-facing name. The name map is computed from the
 * catalog on every request, so it is the same on every server and after every restart.
 */

export interface McpCatalogEntry {
  /** `<appId>__<toolName>`, or its hashed form when longer than 64 characters. */
  name: string;
  /** `<appId>:::<toolName>`. */
  toolId: string;
  app: LoadedApp;
  tool: CatalogTool;
}

/** The end of a hashed name: `_` and 8 hex digits of the composite id's SHA-256. */
const HASHED_TAIL = /_[0-9a-f]{8}$/;

const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** The MCP name of a tool (shared/tool-names.ts holds the rule). */
export function mcpToolName(appId: string, toolName: string): string {
  return modelToolName(appId, toolName, sha256Hex);
}

/** Every tool the key may run, in `GET /tools` order (apps by id, tools in document order). */
export async function mcpCatalog(
  registry: AppRegistry,
  principal: Principal,
  apps: ReadonlySet<string> | undefined,
): Promise<McpCatalogEntry[]> {
  const loaded = apps
    ? (await Promise.all([...apps].sort().map((appId) => registry.get(appId)))).filter(
        (app): app is LoadedApp => app !== null,
      )
    : await registry.list();
  const entries: McpCatalogEntry[] = [];
  for (const app of loaded) {
    if (!canExecute(principal.scopes, app.appId)) continue;
    for (const { tool } of app.compiled.tools.values()) {
      entries.push({
        name: mcpToolName(app.appId, tool.name),
        toolId: composeToolId(app.appId, tool.name),
        app,
        tool,
      });
    }
  }
  return entries;
}

/**
 * The catalog entry an MCP name stands for, without listing the catalog: the app id is the part
 * before one of the name's `__` (app ids may hold `__` themselves, so each is tried), and only that
 * app's tools are named; a hashed name whose cut went through the app id falls back to the whole
 * catalog. Null when the key's catalog (narrowed by `apps`) has no such tool.
 */
export async function findMcpTool(
  registry: AppRegistry,
  principal: Principal,
  apps: ReadonlySet<string> | undefined,
  name: string,
): Promise<McpCatalogEntry | null> {
  for (let at = name.indexOf(MODEL_TOOL_SEPARATOR); at > 0; at = name.indexOf(MODEL_TOOL_SEPARATOR, at + 1)) {
    const appId = name.slice(0, at);
    if (!ID_PATTERN.test(appId) || (apps && !apps.has(appId)) || !canExecute(principal.scopes, appId))
      continue;
    const app = await registry.get(appId);
    if (!app) continue;
    for (const { tool } of app.compiled.tools.values()) {
      if (mcpToolName(app.appId, tool.name) === name) {
        return { name, toolId: composeToolId(app.appId, tool.name), app, tool };
      }
    }
  }
  // A hashed name may have cut the app id short (no `__` left in it): search the whole catalog.
  if (name.length === MODEL_TOOL_NAME_MAX && HASHED_TAIL.test(name)) {
    return (await mcpCatalog(registry, principal, apps)).find((entry) => entry.name === name) ?? null;
  }
  return null;
}

/** The operation's own words, where the catalog keeps them (older catalogs joined them into `description`). */
interface OperationText {
  operationId?: string | null;
  summary?: string | null;
  operationDescription?: string | null;
}

/** What an MCP tool listing reads of a tool (the catalog's tool, or a search's shown tool). */
type ListedTool = Pick<
  CatalogTool,
  | 'name'
  | 'method'
  | 'pathTemplate'
  | 'description'
  | 'parametersSchema'
  | 'summary'
  | 'operationDescription'
  | 'operationId'
> &
  Partial<Pick<CatalogTool, 'annotations'>>;

/** The MCP `Tool` of an entry: title, description, schema, annotations and `_meta` of docs/reference.md "MCP". */
export function mcpTool(entry: { name: string; toolId: string; tool: ListedTool }) {
  const { tool } = entry;
  const text: OperationText = tool;
  const method = tool.method.toUpperCase();
  const summary = text.summary || undefined;
  const description =
    (text.operationDescription ?? (text.summary === undefined ? tool.description : null)) ||
    summary ||
    `${method} ${tool.pathTemplate}`;
  return {
    name: entry.name,
    title: summary ?? text.operationId ?? tool.name,
    description,
    inputSchema: tool.parametersSchema as { type: 'object'; [key: string]: unknown },
    // A tool of an MCP server keeps the annotations its server wrote (docs/reference.md "Apps from MCP servers").
    annotations: tool.annotations ?? {
      ...(method === 'GET' || method === 'HEAD' ? { readOnlyHint: true } : {}),
      ...(method === 'DELETE' ? { destructiveHint: true } : {}),
      ...(['GET', 'HEAD', 'PUT', 'DELETE'].includes(method) ? { idempotentHint: true } : {}),
      openWorldHint: true,
    },
    _meta: { 'toolgate/toolId': entry.toolId },
  };
}
