/**
 * What running a tool answers, whichever its upstream is (run-tool.ts: an HTTP API; run-mcp-tool.ts:
 * an MCP server): the time spent on the upstream, the failures both can meet, and the success
 * envelope. Each runner keeps only what its upstream alone does.
 */
import { apiError, type ErrorBody } from '../../shared/errors.ts';
import type { ProxySuccess } from '../../shared/schemas/agent.ts';
import type { CallReport } from '../metrics.ts';
import type { ToolCall } from './tool-call.ts';
import { unreachableCause, unreachableMessage } from './unreachable.ts';
import type { UpstreamFailure } from './upstream.ts';

/** Runs `upstream`, reporting the time it took in tenths of a millisecond. */
export async function timedUpstream<T>(report: CallReport, upstream: () => Promise<T>): Promise<T> {
  const calledAt = performance.now();
  const outcome = await upstream();
  report.upstreamMs = Math.round((performance.now() - calledAt) * 10) / 10;
  return outcome;
}

/**
 * The contract's answer to a failure every upstream can meet; `who` names the upstream in the
 * message (`The upstream`, `The MCP server`). Registering an MCP-server app answers some of them
 * too (apps/mcp-apps.ts), so this records nothing: {@link failedRun} does, for a call.
 */
export function upstreamFailure(failure: UpstreamFailure, who: string): ErrorBody {
  switch (failure.kind) {
    case 'upstream_error':
      return apiError('upstream_error', `${who} answered ${failure.status}.`, {
        upstream_status: failure.status,
        upstream_body: failure.body,
      });
    case 'upstream_timeout':
      return apiError('upstream_timeout', `${who} did not answer in time.`);
    case 'upstream_unreachable':
      return apiError('upstream_unreachable', unreachableMessage(who, unreachableCause(failure.cause)));
    case 'upstream_too_large':
      return apiError('upstream_too_large', `${who} answered more than ${failure.limit} bytes.`, {
        limit: failure.limit,
      });
  }
}

/** {@link upstreamFailure} for a call, whose report keeps the upstream's status or failure cause. */
export function failedRun(report: CallReport, failure: UpstreamFailure, who: string): ErrorBody {
  if (failure.kind === 'upstream_error') report.upstreamStatus = failure.status;
  if (failure.kind === 'upstream_unreachable') report.cause = failure.cause;
  return upstreamFailure(failure, who);
}

/** The success envelope of a call, `data` already redacted. */
export function succeeded(call: ToolCall, data: unknown): ProxySuccess {
  return {
    ok: true,
    data,
    meta: {
      tool_id: call.target.toolId,
      duration_ms: Math.round(performance.now() - call.request.startedAt),
      provider: call.target.app.provider,
    },
  };
}
