import type { Logger } from 'pino';
import type { Issue } from '../../shared/errors.ts';
import type { Caller } from '../auth/agent.ts';
import type { AppDeps } from '../deps.ts';
import type { RequestLogFields } from '../logger.ts';
import type { CallReport } from '../metrics.ts';
import type { SeenSecrets } from '../oauth/access.ts';
import type { CallSite } from './call-record.ts';
import type { ResolvedTool } from './resolve.ts';

declare const admitted: unique symbol;
/** A caller that passed the rate limit of this call; only `admitCall` (call-tool.ts) makes one. */
export type AdmittedCaller = Caller & { readonly [admitted]: true };

/** What a surface asks of the tool-call core (and where it came from, for the call log). */
export interface CallRequest extends CallSite {
  /** Composite `<appId>:::<toolName>`, or a bare tool name with `appId`. */
  toolId: string;
  parameters: Record<string, unknown>;
  /** X-Service-App-Id. */
  appId?: string | undefined;
  /** X-Service-Idempotency-Key as sent. */
  idempotencyKey?: string | undefined;
  /** Parameter problems the adapter found before its parser dropped them (a `__proto__` name). */
  earlierIssues?: readonly Issue[];
  /** Only these apps' tools exist for this call (MCP's `apps` filter); all when absent. */
  apps?: ReadonlySet<string> | undefined;
  /** The request's logger (made on first use: only an idempotent call may log). */
  log: () => Logger;
  /** The request's log line: the call fills in its tool, app and upstream (surfaces with one). */
  logFields?: RequestLogFields;
}

/** What a call did, for its metrics (`recordCall`) and its request's log line. */
export interface ToolCallReport extends CallReport {
  /** The composite id of the tool the call resolved to. */
  toolId?: string;
}

/**
 * One tool call past its checks, as the last steps see it (call-tool.ts → authorize-and-run.ts →
 * run-tool.ts): who calls, which tool, with what, since when (`request`), under which limits
 * (`deps.config`), and what it reports. Built once per call, so no step takes a list of positional
 * parameters or hands accumulators down.
 */
export class ToolCall {
  /** Every secret put into the upstream request: redacted from whatever comes back. */
  readonly seen: SeenSecrets = new Set<string>();

  constructor(
    readonly deps: AppDeps,
    readonly caller: AdmittedCaller,
    readonly target: ResolvedTool,
    readonly request: CallRequest,
    /** Filled in as the call goes: the upstream's status, time and failure cause. */
    readonly report: ToolCallReport,
  ) {}
}
