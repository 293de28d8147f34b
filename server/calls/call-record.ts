import { type ErrorCode, statusOf } from '../../shared/errors.ts';
import type { Caller } from '../auth/agent.ts';
import type { AppDeps } from '../deps.ts';
import type { Surface } from '../observe/call-log.ts';

/** Where a tool call came from, as its call-log record names it (docs/reference.md "Call log"). */
export interface CallSite {
  surface: Surface;
  requestId: string;
  /** performance.now() at arrival. */
  startedAt: number;
  /** X-Service-User-Id as sent (after its shape was checked). */
  userId?: string | undefined;
}

/** What a call came to: its outcome and, as far as it got, its tool and upstream. */
export interface CallEnd {
  outcome: 'ok' | ErrorCode;
  /** The tool's composite id when it resolved, else the id as asked (checked as plain text). */
  toolId?: string | undefined;
  appId?: string | undefined;
  upstreamStatus?: number | undefined;
  replayed?: boolean | undefined;
}

/**
 * Hands one call's record to the call log: a push on an array, never a wait (observe/call-log.ts).
 * Every surface's tool call ends here exactly once, whatever its outcome: the core for the calls
 * it runs (call-tool.ts), the adapters for the few they refuse before it (a body of the wrong
 * shape, an unknown MCP tool).
 */
export function logCall(deps: AppDeps, caller: Caller, site: CallSite, end: CallEnd): void {
  const durationMs = Math.round(performance.now() - site.startedAt);
  deps.callLog.record({
    at: deps.clock.now() - durationMs,
    durationMs,
    surface: site.surface,
    keyId: caller.principal.keyId,
    clientId: caller.clientId,
    userId: site.userId ?? caller.userId ?? null,
    appId: end.appId ?? null,
    toolId: end.toolId ?? null,
    outcome: end.outcome,
    status: end.outcome === 'ok' ? 200 : statusOf(end.outcome),
    upstreamStatus: end.upstreamStatus ?? null,
    idempotentReplay: end.replayed === true,
    requestId: site.requestId,
  });
}
