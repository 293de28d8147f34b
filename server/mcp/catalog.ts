import { createHash } from 'node:crypto';
import { composeToolId, ID_PATTERN } from '../../shared/ids.ts';
import {
  HASHED_PREFIX,
  hashedToolName,
  MODEL_TOOL_NAME_MAX,
  MODEL_TOOL_SEPARATOR,
  modelToolName,
} from '../../shared/tool-names.ts';
import type { AppRegistry, LoadedApp } from '../apps/registry.ts';
import type { Principal } from '../auth/authenticate.ts';
import { canExecute } from '../auth/scopes.ts';
import type { Tool as CatalogTool } from '../catalog/types.ts';

/**
 * The catalog as an MCP client sees it (docs/reference.md "MCP"): exactly the tools `GET /tools` lists for the
 * key (narrowed by `apps`), each under its model-facing name. The name map is computed from the
 * catalog on every request, so it is the same on every server and after every restart.
 *
 * Names are unique in a list: app ids and tool names may hold `__`, so two tools can have one plain
 * name (`a__b` + `c` and `a` + `b__c`); then each of them is listed under its hashed form, which the
 * hash of its composite id keeps apart (as the SDK adapters name them, sdk/src/adapters/names.ts).
 */

export interface McpCatalogEntry {
  /** `<appId>__<toolName>`, or its hashed form when longer than 64 characters or shared by another tool. */
  name: string;
  /** `<appId>:::<toolName>`. */
  toolId: string;
  app: LoadedApp;
  tool: CatalogTool;
}

/** The end of a hashed name: `_` and 8 hex digits of the composite id's SHA-256. */
const HASHED_TAIL = /_[0-9a-f]{8}$/;

const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** The MCP name of a tool by itself (shared/tool-names.ts holds the rule); {@link mcpNameIn} in a list. */
export function mcpToolName(appId: string, toolName: string): string {
  return modelToolName(appId, toolName, sha256Hex);
}

/** The hashed form of a name (shared/tool-names.ts). */
const hashedForm = (name: string, toolId: string) => hashedToolName(name, toolId, sha256Hex);

/**
 * The MCP name of one tool of the key's catalog (narrowed by `apps`), as `tools/list` lists it: its
 * own name, or the hashed form when another tool of that catalog has the same plain name.
 */
export async function mcpNameIn(
  registry: AppRegistry,
  principal: Principal,
  apps: ReadonlySet<string> | undefined,
  appId: string,
  toolName: string,
): Promise<string> {
  const name = mcpToolName(appId, toolName);
  if (name !== `${appId}${MODEL_TOOL_SEPARATOR}${toolName}`) return name;
  let owners = 0;
  for await (const { app, rest } of appsOf(registry, principal, apps, name))
    if (app.compiled.tools.has(rest)) owners += 1;
  return owners > 1 ? hashedForm(name, composeToolId(appId, toolName)) : name;
}

/**
 * The apps of the key's catalog (narrowed by `apps`) a name may begin with, and the rest of the
 * name after theirs: app ids may hold `__` themselves, so each `__` of the name is a place to cut.
 */
async function* appsOf(
  registry: AppRegistry,
  principal: Principal,
  apps: ReadonlySet<string> | undefined,
  name: string,
): AsyncGenerator<{ app: LoadedApp; rest: string }> {
  for (let at = name.indexOf(MODEL_TOOL_SEPARATOR); at > 0; at = name.indexOf(MODEL_TOOL_SEPARATOR, at + 1)) {
    const appId = name.slice(0, at);
    if (!admitted(principal, apps, appId)) continue;
    const app = await registry.get(appId);
    if (app) yield { app, rest: name.slice(at + MODEL_TOOL_SEPARATOR.length) };
  }
}

function admitted(principal: Principal, apps: ReadonlySet<string> | undefined, appId: string): boolean {
  return ID_PATTERN.test(appId) && (!apps || apps.has(appId)) && canExecute(principal.scopes, appId);
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
  const uses = new Map<string, number>();
  for (const { name } of entries) uses.set(name, (uses.get(name) ?? 0) + 1);
  for (const entry of entries)
    if ((uses.get(entry.name) ?? 0) > 1) entry.name = hashedForm(entry.name, entry.toolId);
  return entries;
}

/**
 * The catalog entry an MCP name stands for, without listing the catalog: the app id is the part
 * before one of the name's `__` (app ids may hold `__` themselves, so each is tried), and only that
 * app's tools are named; a hashed name whose cut went through the app id falls back to the whole
 * catalog. A plain name that two tools share stands for neither (each is listed, and found, under
 * its hashed form). Null when the key's catalog (narrowed by `apps`) has no such tool.
 */
export async function findMcpTool(
  registry: AppRegistry,
  principal: Principal,
  apps: ReadonlySet<string> | undefined,
  name: string,
): Promise<McpCatalogEntry | null> {
  const hashed = HASHED_TAIL.test(name);
  const found: McpCatalogEntry[] = [];
  for await (const { app, rest } of appsOf(registry, principal, apps, name)) {
    const entry = (tool: CatalogTool) => ({ name, toolId: composeToolId(app.appId, tool.name), app, tool });
    // A plain name names its tool: one lookup, not a walk through the app's tools on every call.
    const direct = app.compiled.tools.get(rest)?.tool;
    if (direct && mcpToolName(app.appId, direct.name) === name) found.push(entry(direct));
    if (!hashed) continue;
    // A hashed name is the hashed form of a plain name that begins as it does: a long name's own,
    // or the one a shared plain name is listed under. Hashed only when the beginnings agree.
    for (const { tool } of app.compiled.tools.values()) {
      const plain = `${app.appId}${MODEL_TOOL_SEPARATOR}${tool.name}`;
      if (
        name.startsWith(plain.slice(0, HASHED_PREFIX)) &&
        hashedForm(plain, composeToolId(app.appId, tool.name)) === name
      )
        found.push(entry(tool));
    }
  }
  if (found.length > 0) return found.length === 1 ? (found[0] as McpCatalogEntry) : null;
  // A hashed name may have cut the app id short (no `__` left in it): search the whole catalog.
  if (name.length === MODEL_TOOL_NAME_MAX && hashed) {
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
