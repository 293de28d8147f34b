import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { ErrorCode } from '../shared/errors.ts';
import { dbQueryCount } from './db/count-queries.ts';
import { CounterFamily, HistogramFamily } from './metric-families.ts';

/**
 * Prometheus metrics of one server (its own registry, not prom-client's global one, so several
 * servers can share a process). Labels are bounded: route templates, methods, statuses, contract
 * error codes, and app and tool ids of registered apps only; never a user id, key or client id.
 */

/** What one tool call did, reported once by the tool-call core whatever surface carried it. */
export interface CallReport {
  /** The app and tool the call resolved to; absent when it named none that exists. */
  appId?: string | undefined;
  /** The tool's name within its app (the part after `:::`). */
  tool?: string | undefined;
  /** `ok`, or the contract error code the call answered. */
  outcome: 'ok' | ErrorCode;
  /** The upstream's HTTP status, when it answered. */
  upstreamStatus?: number | undefined;
  /** Time spent waiting for the upstream, when it was called. */
  upstreamMs?: number | undefined;
  /** Why the upstream was unreachable: a system error code (ECONNREFUSED, ENOTFOUND, …). */
  cause?: string | undefined;
  /** true when the answer was a stored one (idempotency replay): no upstream call was made. */
  replayed?: boolean | undefined;
}

export type RefreshResult = 'ok' | 'reauth_required' | 'failed';

/** Label value for calls that named no registered tool: keeps unknown ids out of the label set. */
const NONE = '-';

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'toolgate_' });
  // The four series every request or call updates: families of our own (metric-families.ts).
  const requests = new CounterFamily<'route' | 'method' | 'status'>(
    'toolgate_http_requests_total',
    'HTTP requests by route template, method and status',
    registry,
  );
  const duration = new HistogramFamily<'route'>(
    'toolgate_http_request_duration_seconds',
    'HTTP request duration by route template',
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registry,
  );
  const calls = new CounterFamily<'app' | 'tool' | 'outcome'>(
    'toolgate_tool_calls_total',
    'Tool calls (/proxyV2 and MCP tools/call) by app, tool and outcome (ok or the contract error code)',
    registry,
  );
  const upstream = new HistogramFamily<'app' | 'tool'>(
    'toolgate_upstream_duration_seconds',
    'Time waiting for the upstream per tool call, by app and tool',
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registry,
  );
  const refreshes = new Counter({
    name: 'toolgate_oauth_refreshes_total',
    help: 'End-user token refreshes by app and outcome (ok, reauth_required, failed)',
    labelNames: ['app', 'outcome'] as const,
    registers: [registry],
  });
  const replays = new Counter({
    name: 'toolgate_idempotency_replays_total',
    help: 'Tool calls answered with the stored answer of an earlier request (X-Service-Idempotent-Replayed)',
    labelNames: ['app'] as const,
    registers: [registry],
  });
  const rateLimited = new Counter({
    name: 'toolgate_rate_limited_total',
    help: 'Tool calls and OAuth flow starts refused by the per-key rate limit (429 rate_limited)',
    registers: [registry],
  });
  // What a warm tool call must not do (the bench reads both around its load).
  new Counter({
    name: 'toolgate_db_queries_total',
    help: 'Statements sent to the database by this process (every query, transactions included)',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(dbQueryCount());
    },
  });
  const callLogWritten = new Counter({
    name: 'toolgate_call_log_written_total',
    help: 'Call-log records written to the database',
    registers: [registry],
  });
  const callLogDropped = new Counter({
    name: 'toolgate_call_log_dropped_total',
    help: 'Call-log records lost: the database refused their batch, or too many waited while it was away',
    registers: [registry],
  });
  const kmsCalls = new Counter({
    name: 'toolgate_kms_calls_total',
    help: 'Calls to the KMS (wrap, unwrap); unwrapped data keys are cached, so warm calls make none',
    labelNames: ['operation'] as const,
    registers: [registry],
  });

  let searchTools: () => number = () => 0;
  new Gauge({
    name: 'toolgate_search_tools',
    help: 'Tools this process can search without reading the database (their apps’ segments are in memory)',
    registers: [registry],
    collect() {
      this.set(searchTools());
    },
  });

  return {
    registry,
    /** Where the search gauge reads its figure (the search is made after the metrics). */
    searchTools(count: () => number): void {
      searchTools = count;
    },
    observe(route: string, method: string, status: number, seconds: number): void {
      // Series are bounded like their labels: route templates × methods × statuses.
      requests.series(`${route} ${method} ${status}`, () => ({
        route,
        method,
        status: String(status),
      })).value += 1;
      duration.series(route, () => ({ route })).observe(seconds);
    },
    /** One tool call, whatever its outcome. */
    recordCall(report: CallReport): void {
      const app = report.appId ?? NONE;
      const tool = report.appId && report.tool ? report.tool : NONE;
      // Registered tools × outcomes: bounded like the labels.
      const { outcome } = report;
      calls.series(`${app}\u0000${tool}\u0000${outcome}`, () => ({ app, tool, outcome })).value += 1;
      if (report.upstreamMs !== undefined)
        upstream.series(`${app}\u0000${tool}`, () => ({ app, tool })).observe(report.upstreamMs / 1000);
      if (report.replayed) replays.inc({ app });
      if (report.outcome === 'rate_limited') rateLimited.inc();
    },
    /** A refusal of the rate limit that is not a tool call (an OAuth flow start). */
    recordRateLimited(): void {
      rateLimited.inc();
    },
    recordRefresh(appId: string, outcome: RefreshResult): void {
      refreshes.inc({ app: appId, outcome });
    },
    /** The call log's writer (observe/call-log.ts): what reached the database, what was lost. */
    callLog: {
      written: (count: number) => callLogWritten.inc(count),
      dropped: (count: number) => callLogDropped.inc(count),
    },
    recordKmsCall(operation: 'wrap' | 'unwrap'): void {
      kmsCalls.inc({ operation });
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
