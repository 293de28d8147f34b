import type { Logger } from 'pino';
import type { Caller } from '../auth/agent.ts';
import type { CallOutcome } from '../calls/call-tool.ts';
import type { RequestLogFields } from '../logger.ts';

export const MCP_MODES = ['auto', 'all', 'search'] as const;
export type McpMode = (typeof MCP_MODES)[number];

/** One authenticated `/mcp` request, as the adapter hands it to the MCP server it builds. */
export interface McpCall {
  caller: Caller;
  /** X-Service-User-Id as sent. */
  userId: string | undefined;
  /** The `apps` query filter; all the key's apps when absent. */
  apps: ReadonlySet<string> | undefined;
  /** The `mode` query: the catalog, the search pair, or either by the catalog's size (the default). */
  mode: McpMode;
  /** The tools/call arguments carry an own `__proto__` (parsers drop it; the contract reports it). */
  protoArguments: boolean;
  startedAt: number;
  /** X-Request-Id of the HTTP request (the call log names it). */
  requestId: string;
  /** The request's logger (made on first use). */
  log: () => Logger;
  /** The request's log line: key and client (set by the adapter), the call's tool, upstream and code. */
  logFields: RequestLogFields;
  /**
   * The outcome, when the direct path (direct-call.ts) already ran the call and hands the answer
   * to the SDK (an authorization round): the MCP server answers it without running it again.
   */
  settled?: CallOutcome;
}

/** Where the adapter puts the McpCall inside the SDK's `authInfo.extra`. */
export const MCP_CALL = 'toolgate/call';
