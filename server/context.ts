import type { IncomingHttpHeaders } from 'node:http';
import type { Logger } from 'pino';
import type { ReadBody } from './catalog/compiler.ts';
import type { AppDeps } from './deps.ts';
import { lazyLogger, type RequestLogFields } from './logger.ts';

/** Status and headers a procedure may set on its REST answer (success only; errors carry their own). */
export interface ResponseMeta {
  status?: number;
  headers: Record<string, string>;
}

export interface Context {
  deps: AppDeps;
  /** The mount the request came through: REST routes or `/trpc` (the call log names it). */
  surface: 'rest' | 'trpc';
  requestId: string;
  headers: IncomingHttpHeaders;
  /** The request's logger (made on first use). */
  log: () => Logger;
  response: ResponseMeta;
  /** performance.now() at arrival: meta.duration_ms is the whole call as the server saw it. */
  startedAt: number;
  /** The client's address (socket), for the failed-key limiter; absent outside HTTP. */
  remoteAddress: string | undefined;
  /** What the request's log line adds (key, client, tool, upstream): filled in as the call goes. */
  logFields: RequestLogFields;
  /**
   * The document of an app registration whose body was read on the compile worker (its `openapi`
   * in the input is a stand-in: server/catalog/stand-in.ts); undefined otherwise.
   */
  document: ReadBody | undefined;
}

/** The transport-free context: tests and other surfaces build it directly. */
export function createContextInner(
  deps: AppDeps,
  request: {
    surface: 'rest' | 'trpc';
    requestId: string;
    headers: IncomingHttpHeaders;
    startedAt?: number;
    remoteAddress?: string;
    logFields?: RequestLogFields;
    document?: ReadBody | undefined;
  },
): Context {
  // One plain shape for every request (no getter, no conditional spread): built on every call.
  return {
    deps,
    surface: request.surface,
    requestId: request.requestId,
    headers: request.headers,
    log: lazyLogger(deps.logger, request.requestId),
    response: { headers: {} },
    startedAt: request.startedAt ?? performance.now(),
    remoteAddress: request.remoteAddress,
    logFields: request.logFields ?? {},
    document: request.document,
  };
}

/**
 * A single-valued header. Node delivers an array only for set-cookie; a contract header sent twice
 * was already refused by its surface (http/repeated-headers.ts), so an array here reads as absent.
 */
export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? undefined : value;
}
