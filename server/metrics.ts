import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import type { ErrorCode } from '../shared/errors.ts';
import { dbQueryCount } from './db/count-queries.ts';

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

/**
 * The label children of one series, made on its first use and kept: prom-client hashes a label
 * object on every inc/observe, which showed on the hot path (bench profile).
 */
function seriesOf<T>(cache: Map<string, T>, key: string, make: () => T): T {
  let series = cache.get(key);
  if (series === undefined) {
    series = make();
    cache.set(key, series);
  }
  return series;
}

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'toolgate_' });
  const requests = new Counter({
    name: 'toolgate_http_requests_total',
    help: 'HTTP requests by route template, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'toolgate_http_request_duration_seconds',
    help: 'HTTP request duration by route template',
    labelNames: ['route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const calls = new Counter({
    name: 'toolgate_tool_calls_total',
    help: 'Tool calls (/proxyV2 and MCP tools/call) by app, tool and outcome (ok or the contract error code)',
    labelNames: ['app', 'tool', 'outcome'] as const,
    registers: [registry],
  });
  const upstream = new Histogram({
    name: 'toolgate_upstream_duration_seconds',
    help: 'Time waiting for the upstream per tool call, by app and tool',
    labelNames: ['app', 'tool'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
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
    help: 'Tool calls refused by the per-key rate limit (429 rate_limited)',
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
  const kmsCalls = new Counter({
    name: 'toolgate_kms_calls_total',
    help: 'Calls to the KMS (wrap, unwrap); unwrapped data keys are cached, so warm calls make none',
    labelNames: ['operation'] as const,
    registers: [registry],
  });

  // Bounded like the labels: route templates × methods × statuses.
  const perRequest = new Map<
    string,
    { count: ReturnType<typeof requests.labels>; duration: ReturnType<typeof duration.labels> }
  >();

  const perCall = new Map<
    string,
    { count: ReturnType<typeof calls.labels>; upstream: ReturnType<typeof upstream.labels> }
  >();

  return {
    registry,
    observe(route: string, method: string, status: number, seconds: number): void {
      const series = seriesOf(perRequest, `${route} ${method} ${status}`, () => ({
        count: requests.labels({ route, method, status: String(status) }),
        duration: duration.labels({ route }),
      }));
      series.count.inc();
      series.duration.observe(seconds);
    },
    /** One tool call, whatever its outcome. */
    recordCall(report: CallReport): void {
      const app = report.appId ?? NONE;
      const tool = report.appId && report.tool ? report.tool : NONE;
      // Registered tools × outcomes: bounded like the labels.
      const series = seriesOf(perCall, `${app}\u0000${tool}\u0000${report.outcome}`, () => ({
        count: calls.labels({ app, tool, outcome: report.outcome }),
        upstream: upstream.labels({ app, tool }),
      }));
      series.count.inc();
      if (report.upstreamMs !== undefined) series.upstream.observe(report.upstreamMs / 1000);
      if (report.replayed) replays.inc({ app });
      if (report.outcome === 'rate_limited') rateLimited.inc();
    },
    recordRefresh(appId: string, outcome: RefreshResult): void {
      refreshes.inc({ app: appId, outcome });
    },
    recordKmsCall(operation: 'wrap' | 'unwrap'): void {
      kmsCalls.inc({ operation });
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
