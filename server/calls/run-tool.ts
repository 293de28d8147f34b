import { SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import { apiError, type ErrorBody } from '../../shared/errors.ts';
import type { ProxySuccess } from '../../shared/schemas/agent.ts';
import type { Credentials } from '../catalog/request.ts';
import { inSpan } from '../observe/tracing.ts';
import { err, ok, type Result } from '../result.ts';
import { Redactor } from './redact.ts';
import { failedRun, succeeded, timedUpstream } from './run-answer.ts';
import type { ToolCall } from './tool-call.ts';
import { callUpstream, toData, type UpstreamOutcome } from './upstream.ts';

const BACKSLASH = 0x5c;

/**
 * The upstream request's span, after the HTTP semantic conventions (client side): method, host,
 * port and the operation's path template (`/items/{itemId}`), never the URL itself, whose path and
 * query may carry an API key or a user's data.
 */
async function tracedUpstream(
  tracer: Tracer,
  url: URL,
  operation: { method: string; pathTemplate: string },
  upstream: () => Promise<UpstreamOutcome>,
): Promise<UpstreamOutcome> {
  const attributes = {
    'http.request.method': operation.method,
    'server.address': url.hostname,
    'server.port': Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
    'url.scheme': url.protocol.slice(0, -1),
    'url.template': operation.pathTemplate,
  };
  const name = `${operation.method} ${operation.pathTemplate}`;
  return inSpan(tracer, name, SpanKind.CLIENT, attributes, async (span) => {
    const outcome = await upstream();
    if (outcome.ok) span?.setAttribute('http.response.status_code', outcome.value.status);
    else {
      if (outcome.error.kind === 'upstream_error')
        span?.setAttribute('http.response.status_code', outcome.error.status);
      span?.setAttribute('error.type', outcome.error.kind);
      span?.setStatus({ code: SpanStatusCode.ERROR });
    }
    return outcome;
  });
}

export type RunOutcome = Result<ProxySuccess, ErrorBody>;

/**
 * Runs a resolved, authorized, validated call against the upstream, within the configured time
 * and size limits, reports what the upstream did, and shapes the envelope. A
 * secret of `call.seen` in the success body is redacted in its bytes, before the body is parsed, and in
 * the parsed value when the bytes hold a backslash: only a JSON escape (`\u0061…`) can spell a
 * secret the bytes do not show, and a walk of every value costs what the rest of the call does.
 */
export async function runTool(call: ToolCall, credentials: Credentials): Promise<RunOutcome> {
  const { app, tool, toolId } = call.target;
  const { config } = call.deps;
  const { report } = call;
  const built = tool.buildRequest(app.baseUrl, call.request.parameters, { credentials });
  if (!built.ok) {
    return err(
      apiError('invalid_parameters', 'The parameters cannot be sent to the upstream.', {
        tool_id: toolId,
        issues: built.error,
      }),
    );
  }
  const upstream = () =>
    callUpstream(built.value, app.baseUrl, config.upstreamTimeoutMs, config.maxUpstreamBodyBytes);
  const tracer = call.deps.tracing?.tracer;
  const outcome = await timedUpstream(report, () =>
    tracer ? tracedUpstream(tracer, built.value.url, tool.tool, upstream) : upstream(),
  );
  if (!outcome.ok) return err(failedRun(report, outcome.error, 'The upstream'));
  const answer = outcome.value;
  report.upstreamStatus = answer.status;
  const redactor = new Redactor(call.seen);
  const body = redactor.bytes(answer.body);
  const data = toData(answer.contentType, body);
  return ok(succeeded(call, redactor.empty || !body.includes(BACKSLASH) ? data : redactor.value(data)));
}
