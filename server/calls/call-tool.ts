import { type Attributes, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { apiError, type ErrorBody, statusOf } from '../../shared/errors.ts';
import { HEADER } from '../../shared/headers.ts';
import type { ProxySuccess } from '../../shared/schemas/agent.ts';
import type { Caller } from '../auth/agent.ts';
import type { Principal } from '../auth/authenticate.ts';
import type { AppDeps } from '../deps.ts';
import { requestFingerprint } from '../idempotency/fingerprint.ts';
import { checkIdempotencyKey } from '../idempotency/key.ts';
import { scopeOf } from '../idempotency/service.ts';
import { isOAuthApp } from '../oauth/provider.ts';
import { inSpan } from '../observe/tracing.ts';
import { err, ok, type Result } from '../result.ts';
import { authorizeAndRun } from './authorize-and-run.ts';
import { type CallSite, logCall } from './call-record.ts';
import { checkParameters, checkScope, checkUserHeader } from './checks.ts';
import { Redactor } from './redact.ts';
import { resolveTool, toolNotFound } from './resolve.ts';
import type { RunOutcome } from './run-tool.ts';
import { type AdmittedCaller, type CallRequest, ToolCall, type ToolCallReport } from './tool-call.ts';

export type { AdmittedCaller, CallRequest } from './tool-call.ts';

/**
 * The tool-call core (docs/reference.md "Agent endpoints"): the one path `/proxyV2` (REST and tRPC) and MCP `tools/call`
 * share. It knows nothing of HTTP, tRPC or MCP: it answers a typed outcome, and each surface maps
 * it to its own wire (the error side carries the contract body and the headers REST adds).
 *
 * Authentication (key → client, auth/agent.ts) stays in front, in each adapter; so does parsing the
 * body's shape, which the contract orders after the rate limit: hence two steps, `admitCall` then
 * `callTool`, the second taking only what the first let through. Past its checks a call is one
 * object (tool-call.ts) that the last steps share.
 */

export interface CallSuccess {
  body: ProxySuccess;
  /** `X-Service-Idempotent-Replayed` when the answer is a stored one. */
  headers: Record<string, string>;
}

export interface CallFailure {
  body: ErrorBody;
  /** `Retry-After` of a 429, `X-Service-Idempotent-Replayed` of a stored 502/504. */
  headers: Record<string, string>;
}

export type CallOutcome = Result<CallSuccess, CallFailure>;

/** The headers of a fresh answer: none (shared, never written to). */
const NO_HEADERS: Record<string, string> = Object.freeze({}) as Record<string, string>;

const failure = (body: ErrorBody, headers: Record<string, string> = {}): CallOutcome =>
  err({ body, headers });

/**
 * Step 1, the per-key rate limit (docs/reference.md "Limits"): a refused call does not count
 * against it, but is a call of the call log (`toolId` as asked, when the surface knows it).
 */
export function admitCall(
  deps: AppDeps,
  caller: Caller,
  site: CallSite,
  toolId?: string,
): Result<AdmittedCaller, CallFailure> {
  const refused = takeRateLimit(deps, caller.principal);
  if (refused) {
    deps.metrics.recordCall({ outcome: 'rate_limited' });
    logCall(deps, caller, site, { outcome: 'rate_limited', toolId });
    return err(refused);
  }
  return ok(caller as AdmittedCaller);
}

/**
 * One unit of the key's rate limit (docs/reference.md "Limits"): tool calls and OAuth flow starts
 * share it. null when let through; else the 429 body and its Retry-After (nothing was counted).
 */
export function takeRateLimit(deps: AppDeps, principal: Principal): CallFailure | null {
  const decision = deps.limiter.take(principal.keyId ?? 'admin', deps.clock.now());
  if (decision.ok) return null;
  return {
    body: apiError('rate_limited', 'Too many calls with this API key; retry later.', {
      retry_after: decision.error.retryAfterSeconds,
    }),
    headers: { [HEADER.retryAfter]: String(decision.error.retryAfterSeconds) },
  };
}

/** What the run step answers, with the status idempotency stores it under. */
interface RunAnswer {
  status: number;
  body: unknown;
  outcome: RunOutcome;
}

/**
 * Steps 2–9: tool → caller scope → parameters → user id → idempotency → user authorization →
 * upstream → envelope. With an idempotency key the last two run at most once per (API key, key).
 */
export function callTool(deps: AppDeps, caller: AdmittedCaller, request: CallRequest): Promise<CallOutcome> {
  const tracer = deps.tracing?.tracer;
  if (!tracer) return reportedCall(deps, caller, request);
  return inSpan(
    tracer,
    `execute_tool ${request.toolId}`,
    SpanKind.INTERNAL,
    toolSpanAttributes(caller, request),
    async (span) => {
      const outcome = await reportedCall(deps, caller, request);
      const code = outcome.ok ? 'ok' : outcome.error.body.error;
      span?.setAttribute('toolgate.outcome', code);
      if (!outcome.ok) {
        span?.setAttribute('error.type', code);
        span?.setStatus({ code: SpanStatusCode.ERROR });
      }
      return outcome;
    },
  );
}

/**
 * The tool call's span, after the GenAI semantic conventions (`execute_tool`) and, for an MCP
 * call, the MCP ones: ids and the surface, never an argument, a user id or a credential.
 */
function toolSpanAttributes(caller: AdmittedCaller, request: CallRequest): Attributes {
  return {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': request.toolId,
    'gen_ai.tool.type': 'function',
    'toolgate.surface': request.surface,
    'toolgate.client_id': caller.clientId,
    ...(request.surface === 'mcp' ? { 'mcp.method.name': 'tools/call' } : {}),
  };
}

/** The call, then its report to the metrics, the call log and the request's log line. */
async function reportedCall(
  deps: AppDeps,
  caller: AdmittedCaller,
  request: CallRequest,
): Promise<CallOutcome> {
  const report: ToolCallReport = { outcome: 'ok' };
  const outcome = await runCall(deps, caller, request, report);
  report.outcome = outcome.ok ? 'ok' : outcome.error.body.error;
  report.replayed =
    (outcome.ok ? outcome.value : outcome.error).headers[HEADER.idempotentReplayed] === 'true';
  deps.metrics.recordCall(report);
  logCall(deps, caller, request, {
    ...report,
    // An id that resolved to no tool is kept as asked: "what failed" includes what was asked for.
    toolId: report.toolId ?? request.toolId,
  });
  const fields = request.logFields;
  if (fields) {
    fields.toolId = report.toolId;
    fields.appId = report.appId;
    fields.upstreamStatus = report.upstreamStatus;
    fields.upstreamMs = report.upstreamMs;
    fields.cause = report.cause;
  }
  return outcome;
}

async function runCall(
  deps: AppDeps,
  caller: AdmittedCaller,
  request: CallRequest,
  report: ToolCallReport,
): Promise<CallOutcome> {
  const resolved = await resolveTool(deps.apps, request.toolId, request.appId);
  if (!resolved.ok) return failure(resolved.error);
  const target = resolved.value;
  report.toolId = target.toolId;
  report.appId = target.app.appId;
  report.tool = target.toolId.slice(target.app.appId.length + 3);
  if (request.apps && !request.apps.has(target.app.appId)) return failure(toolNotFound(target.toolId));
  const denied =
    checkScope(caller.principal, target) ??
    checkParameters(target, request.parameters, request.earlierIssues) ??
    checkUserHeader(request.userId, isOAuthApp(target.app)) ??
    checkIdempotencyKey(request.idempotencyKey);
  if (denied) return failure(denied);

  const call = new ToolCall(deps, caller, target, request, report);
  if (request.idempotencyKey === undefined) return settle(await run(call));

  const { toolId, app } = target;
  const { userId, parameters } = request;
  const result = await deps.idempotency.run(
    { scope: scopeOf(caller.principal.keyId), key: request.idempotencyKey },
    requestFingerprint({ toolId, appId: app.appId, userId, parameters }),
    () => run(call),
    request.log(),
  );
  if (!result.ok) {
    return failure(
      result.error === 'conflict'
        ? apiError(
            'idempotency_key_reused',
            'This idempotency key was already used with a different request.',
          )
        : apiError(
            'idempotency_in_progress',
            'A request with this idempotency key is still running; retry later.',
          ),
    );
  }
  const { replayed, answer } = result.value;
  if (!replayed) return settle(answer);
  // The stored answer, byte for byte: a 200 body, or the stored 502/504 error body.
  const headers = { [HEADER.idempotentReplayed]: 'true' };
  return answer.status === 200
    ? ok({ body: answer.body as ProxySuccess, headers })
    : failure(answer.body as ErrorBody, headers);
}

/** Steps 7–9, what idempotency runs at most once: authorization, upstream, envelope. */
async function run(call: ToolCall): Promise<RunAnswer> {
  const outcome = redactFailure(await authorizeAndRun(call), call.seen);
  return outcome.ok
    ? { status: 200, body: outcome.value, outcome }
    : { status: statusOf(outcome.error.error), body: outcome.error, outcome };
}

function settle({ outcome }: RunAnswer): CallOutcome {
  return outcome.ok ? ok({ body: outcome.value, headers: NO_HEADERS }) : failure(outcome.error);
}

/**
 * No secret the service injected leaves in a relayed body (docs/reference.md "Agent endpoints"):
 * applied before the answer is sent or stored for idempotency, so a replay is as clean as the
 * first answer. A success body was redacted where it was read (run-tool.ts); this is the
 * `upstream_body` of a 502, of the API or of the token endpoint.
 */
function redactFailure(outcome: RunOutcome, seen: ReadonlySet<string>): RunOutcome {
  if (outcome.ok || seen.size === 0 || outcome.error.error !== 'upstream_error') return outcome;
  const body = outcome.error;
  return err({ ...body, upstream_body: new Redactor(seen).excerpt(body.upstream_body) });
}
