import {
  type McpRequestContext,
  type McpServerFactory,
  ProtocolError,
  ProtocolErrorCode,
  type RequestStateCodec,
  Server,
} from '@modelcontextprotocol/server';
import type { ErrorBody, ErrorCode } from '../../shared/errors.ts';
import { proxyInput } from '../../shared/schemas/agent.ts';
import { type CallSite, logCall } from '../calls/call-record.ts';
import { admitCall, type CallOutcome, callTool } from '../calls/call-tool.ts';
import { droppedParameterIssues } from '../calls/checks.ts';
import type { AppDeps } from '../deps.ts';
import { authorizationAnswer } from './authorization.ts';
import { findMcpTool, type McpCatalogEntry, mcpCatalog, mcpTool } from './catalog.ts';
import { MCP_CALL, type McpCall } from './context.ts';
import type { AuthorizationState } from './request-state.ts';
import { errorResult, successResult } from './results.ts';
import {
  CALL_TOOL,
  callToolTarget,
  listsSearchPair,
  SEARCH_MODE_TOOLS,
  SEARCH_TOOLS,
  searchToolsResult,
} from './search-mode.ts';

/** A tool id as the call log keeps one asked for: the contract's plain text, else none. */
const TOOL_ID = proxyInput.shape.toolId;

/** Tools per `tools/list` page; the client follows `nextCursor` for the rest. */
export const TOOLS_PAGE_SIZE = 100;
export const SERVER_INFO = { name: 'toolgate', version: '0.1.0' };

/** Cursors are opaque to clients: base64url of the offset, checked on the way back. */
function encodeCursor(offset: number): string {
  return Buffer.from(`o:${offset}`).toString('base64url');
}

function decodeCursor(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  const match = /^o:(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match || encodeCursor(Number(match[1])) !== cursor) {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'The cursor is not one this server gave.');
  }
  return Number(match[1]);
}

/**
 * One MCP tool call: the per-key rate limit, then the tool-call core (a refused call is an outcome
 * like any other). Both the SDK's `tools/call` handler and the direct path (direct-call.ts) run it.
 */
export async function runMcpCall(
  deps: AppDeps,
  call: McpCall,
  toolId: string,
  args: Record<string, unknown> | undefined,
  previous?: AuthorizationState,
): Promise<CallOutcome> {
  const admitted = admitCall(deps, call.caller, mcpSite(call), toolId);
  if (!admitted.ok) {
    call.logFields.error = admitted.error.body.error;
    return admitted;
  }
  // The site's fields written out, not spread (see routers/agent/proxy.ts `run`).
  const outcome = await callTool(deps, admitted.value, {
    surface: 'mcp',
    requestId: call.requestId,
    startedAt: call.startedAt,
    toolId,
    parameters: args ?? {},
    userId: call.userId,
    // The retries of one authorization round share a key: the tool runs once, on any server.
    idempotencyKey: previous ? `mcp:${previous.n}` : undefined,
    earlierIssues: droppedParameterIssues(call.protoArguments),
    apps: call.apps,
    log: call.log,
    logFields: call.logFields,
  });
  // The HTTP answer is a 200 either way: the line names the call's contract code, as /proxyV2's does.
  if (!outcome.ok) call.logFields.error = outcome.error.body.error;
  return outcome;
}

/** An MCP request as the call log names it. */
function mcpSite(call: McpCall): CallSite {
  return { surface: 'mcp', requestId: call.requestId, startedAt: call.startedAt, userId: call.userId };
}

/** A `tools/call` refused before the core: the call log still has it (docs/reference.md "Call log"). */
function logRefused(deps: AppDeps, call: McpCall, toolId: string, outcome: ErrorCode): void {
  logCall(deps, call.caller, mcpSite(call), { outcome, toolId: TOOL_ID.safeParse(toolId).data });
}

/**
 * The per-request MCP server (createMcpHandler builds one for every HTTP request, in either era):
 * `tools/list` over the key's catalog, `tools/call` through the one tool-call core.
 */
export function mcpServerFactory(
  deps: AppDeps,
  codecs: () => Promise<RequestStateCodec<AuthorizationState>>,
): McpServerFactory {
  return async ({ era, authInfo }: McpRequestContext) => {
    const call = authInfo?.extra?.[MCP_CALL] as McpCall | undefined;
    if (!call) throw new Error('an /mcp request reached the MCP server without an authenticated caller');
    const codec = await codecs();
    const server = new Server(SERVER_INFO, {
      capabilities: { tools: {} },
      requestState: { verify: codec.verify },
    });

    server.setRequestHandler('tools/list', async (request) => {
      const offset = decodeCursor(request.params?.cursor);
      if (await listsSearchPair(deps, call)) return { tools: offset === 0 ? SEARCH_MODE_TOOLS : [] };
      const catalog = await mcpCatalog(deps.apps, call.caller.principal, call.apps);
      const page = catalog.slice(offset, offset + TOOLS_PAGE_SIZE).map(mcpTool);
      const next = offset + TOOLS_PAGE_SIZE;
      return { tools: page, ...(next < catalog.length ? { nextCursor: encodeCursor(next) } : {}) };
    });

    server.setRequestHandler('tools/call', async (request, ctx) => {
      const { name } = request.params;
      if (name === SEARCH_TOOLS) return searchToolsResult(deps, call, request.params.arguments);
      let entry: McpCatalogEntry | null;
      let args = request.params.arguments;
      if (name === CALL_TOOL) {
        const target = await callToolTarget(deps, call, args);
        if ('refused' in target) {
          const refused = target.refused.structuredContent as ErrorBody;
          const asked = (args as { name?: unknown } | undefined)?.name;
          logRefused(deps, call, typeof asked === 'string' ? asked : '', refused.error);
          return target.refused;
        }
        ({ entry, arguments: args } = target);
      } else {
        entry = await findMcpTool(deps.apps, call.caller.principal, call.apps, name);
      }
      if (!entry) {
        logRefused(deps, call, name, 'tool_not_found');
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
      }
      const previous = ctx.mcpReq.requestState<AuthorizationState>();
      // Verified (signature, expiry, key/client/user binding) before we get here; the tool is ours to check.
      if (previous !== undefined && (typeof previous !== 'object' || previous.t !== entry.toolId)) {
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid or expired requestState');
      }

      // Settled when the direct path already ran it (direct-call.ts): never run a call twice.
      const outcome = call.settled ?? (await runMcpCall(deps, call, entry.toolId, args, previous));
      if (outcome.ok) return server.projectCallToolResult(successResult(outcome.value.body), undefined);
      const body: ErrorBody = outcome.error.body;
      if (body.error === 'auth_required') {
        return authorizationAnswer(deps, call, entry, body, ctx, era, codec, previous);
      }
      if (body.error === 'tool_not_found') {
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
      }
      return errorResult(body);
    });
    return server;
  };
}
