import type { IncomingHttpHeaders } from 'node:http';
import type { Logger } from 'pino';
import type { AppDeps } from './deps.ts';
import type { RequestLogFields } from './logger.ts';

/** Status and headers a procedure may set on its REST answer (success only; errors carry their own). */
export interface ResponseMeta {
  status?: number;
  headers: Record<string, string>;
}

export interface Context {
  deps: AppDeps;
  requestId: string;
  headers: IncomingHttpHeaders;
  log: Logger;
  response: ResponseMeta;
  /** performance.now() at arrival: meta.duration_ms is the whole call as the server saw it. */
  startedAt: number;
  /** The client's address (socket), for the failed-key limiter; absent outside HTTP. */
  remoteAddress?: string;
  /** What the request's log line adds (key, client, tool, upstream): filled in as the call goes. */
  logFields: RequestLogFields;
}

/** The transport-free context: tests and other surfaces build it directly. */
export function createContextInner(
  deps: AppDeps,
  request: {
    requestId: string;
    headers: IncomingHttpHeaders;
    startedAt?: number;
    remoteAddress?: string;
    logFields?: RequestLogFields;
  },
): Context {
  let log: Logger | undefined;
  return {
    deps,
    requestId: request.requestId,
    headers: request.headers,
    // The request's child logger is made on first use: most calls never log (bench profile).
    get log() {
      log ??= deps.logger.child({ requestId: request.requestId });
      return log;
    },
    response: { headers: {} },
    startedAt: request.startedAt ?? performance.now(),
    ...(request.remoteAddress ? { remoteAddress: request.remoteAddress } : {}),
    logFields: request.logFields ?? {},
  };
}

/** A single-valued header; a repeated header counts as malformed. */
export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? undefined : value;
}
