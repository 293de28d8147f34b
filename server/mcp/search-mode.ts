/**
 * MCP search mode (docs/reference.md "Tool search"): instead of a catalog of thousands, a client
 * lists two tools — `search_tools` finds tools by a task, `call_tool` runs one of them exactly as
 * `tools/call` would (scope, parameters, user authorization with URL elicitation, retries that run
 * once). `mode=auto` (the default) lists the catalog while it holds at most MCP_MAX_LISTED_TOOLS
 * tools, and the pair above that.
 */
import type { Tool } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { apiError } from '../../shared/errors.ts';
import { appIdSchema, composeToolId, ID_PATTERN, splitToolId } from '../../shared/ids.ts';
import { canExecute } from '../auth/scopes.ts';
import type { AppDeps } from '../deps.ts';
import { issuesFromZod } from '../errors.ts';
import { findTools } from '../search/find-tools.ts';
import { findMcpTool, type McpCatalogEntry, mcpTool, mcpToolName } from './catalog.ts';
import type { McpCall } from './context.ts';
import { errorResult, type ToolResult } from './results.ts';

export const SEARCH_TOOLS = 'search_tools';
export const CALL_TOOL = 'call_tool';

const SEARCH_DEFAULT_LIMIT = 8;
const SEARCH_MAX_LIMIT = 20;

/** The two tools search mode lists. */
export const SEARCH_MODE_TOOLS: Tool[] = [
  {
    name: SEARCH_TOOLS,
    title: 'Search tools',
    description:
      'Find the tools that can do a task. Describe the task in plain words (for example "open a bug report in octocat/hello-world"); the answer lists the best tools first, each with its name and input schema. Then run one with call_tool.',
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'The task, in plain words.' },
        apps: {
          type: 'array',
          items: { type: 'string', pattern: ID_PATTERN.source },
          description: 'Only tools of these app ids.',
        },
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: SEARCH_MAX_LIMIT,
          default: SEARCH_DEFAULT_LIMIT,
          description: 'How many tools to answer.',
        },
      },
      required: ['query'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  },
  {
    name: CALL_TOOL,
    title: 'Call a tool',
    description:
      'Run a tool found with search_tools: give its name (or toolId) and its arguments, which must match the input schema search_tools answered for it.',
    inputSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'The tool’s name (or toolId) from search_tools.' },
        arguments: { type: 'object', description: 'The tool’s arguments, as its input schema says.' },
      },
      required: ['name', 'arguments'],
      additionalProperties: false,
    },
    annotations: { openWorldHint: true },
  },
];

/** Which tools `tools/list` shows for this request. */
export async function listsSearchPair(deps: AppDeps, call: McpCall): Promise<boolean> {
  if (call.mode !== 'auto') return call.mode === 'search';
  const count = await deps.search.count((appId) => admitted(call, appId));
  return count > deps.config.mcpMaxListedTools;
}

const admitted = (call: McpCall, appId: string) =>
  (call.apps === undefined || call.apps.has(appId)) && canExecute(call.caller.principal.scopes, appId);

const searchInput = z.object({
  query: z.string().max(20_000),
  // An id no app can have is a mistake (as in GET /tools?apps= and /mcp?apps=), not an empty answer.
  apps: z.array(appIdSchema).max(1_000).optional(),
  limit: z.number().int().min(1).max(SEARCH_MAX_LIMIT).optional(),
});

/** `search_tools`: the ranked tools of the caller's catalog, as MCP names and schemas. */
export async function searchToolsResult(deps: AppDeps, call: McpCall, args: unknown): Promise<ToolResult> {
  const input = searchInput.safeParse(args ?? {});
  if (!input.success) return badArguments(SEARCH_TOOLS, input.error.issues);
  const only = input.data.apps === undefined ? null : new Set(input.data.apps);
  const { found } = await findTools(deps, {
    q: input.data.query,
    admits: (appId) => admitted(call, appId) && (only === null || only.has(appId)),
    offset: 0,
    limit: input.data.limit ?? SEARCH_DEFAULT_LIMIT,
  });
  const tools = found.map(({ appId, tool, requiresUserAuth }) => {
    const listed = mcpTool({
      name: mcpToolName(appId, tool.name),
      toolId: composeToolId(appId, tool.name),
      tool,
    });
    return {
      name: listed.name,
      toolId: listed._meta['toolgate/toolId'],
      title: listed.title,
      description: listed.description,
      inputSchema: listed.inputSchema,
      requiresUserAuth,
    };
  });
  const structured = { tools };
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
}

const callInput = z.object({
  name: z.string().min(1).max(400),
  // Required, as listed: a model that misnames it (`args`, `parameters`) gets told so, rather than
  // having the tool run with no arguments at all.
  arguments: z.record(z.string(), z.unknown()),
});

/** What `call_tool` asks to run, or the tool error that answers it. */
export async function callToolTarget(
  deps: AppDeps,
  call: McpCall,
  args: unknown,
): Promise<{ entry: McpCatalogEntry; arguments: Record<string, unknown> } | { refused: ToolResult }> {
  const input = callInput.safeParse(args ?? {});
  if (!input.success) return { refused: badArguments(CALL_TOOL, input.error.issues) };
  const { name } = input.data;
  const entry =
    (await findMcpTool(deps.apps, call.caller.principal, call.apps, name)) ??
    (await byToolId(deps, call, name));
  if (!entry) {
    return {
      refused: errorResult(
        apiError(
          'tool_not_found',
          `No tool is named ${name}: find the tool's name with search_tools first.`,
          {
            tool_id: name,
          },
        ),
      ),
    };
  }
  return { entry, arguments: input.data.arguments };
}

/** A composite id (`github:::issues_create`) as a catalog entry of the caller's. */
async function byToolId(deps: AppDeps, call: McpCall, toolId: string): Promise<McpCatalogEntry | null> {
  const parts = splitToolId(toolId);
  if (!parts || !admitted(call, parts.appId)) return null;
  const app = await deps.apps.get(parts.appId);
  const tool = app?.compiled.tools.get(parts.toolName);
  if (!app || !tool) return null;
  return {
    name: mcpToolName(app.appId, tool.name),
    toolId: composeToolId(app.appId, tool.name),
    app,
    tool: tool.tool,
  };
}

function badArguments(tool: string, issues: Parameters<typeof issuesFromZod>[0]): ToolResult {
  const body = apiError('invalid_request', `The arguments of ${tool} do not match its input schema.`, {
    issues: issuesFromZod(issues),
  });
  return {
    content: [
      { type: 'text', text: `Fix the listed arguments and call ${tool} again.\n${JSON.stringify(body)}` },
    ],
    structuredContent: body as unknown as Record<string, unknown>,
    isError: true,
  };
}
