import { randomUUID } from 'node:crypto';
import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerOptions,
  type ServerResponse,
} from 'node:http';
import { type Span, SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import { apiError } from '../../shared/errors.ts';
import { HEADER } from '../../shared/headers.ts';
import type { AppDeps } from '../deps.ts';
import { requestProblem } from '../errors.ts';
import { requestLogFields } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import { withActiveSpan } from '../observe/tracing.ts';
import { discardBody } from './body.ts';
import { sendError, sendMethodNotAllowed } from './respond.ts';
import { ToolgateResponse } from './response.ts';
import {
  createRouteTable,
  MatchedRequest,
  parseTarget,
  type RequestTarget,
  type RouteMatch,
} from './route-table.ts';
import { createRoutes } from './routes.ts';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Node refuses a request line plus headers over 16 KiB with a bare 431. A search task travels in
 * the query (GET /tools?q=, tRPC's input=) and any text up to `q`'s 20,000 characters must be
 * answered (docs/reference.md "Tool search"): percent-encoded, a character of another script is 9
 * bytes, so 20,000 of them are 180 KB. The headers timeout still bounds how long a client may send.
 */
const MAX_HEADER_BYTES = 256 * 1024;

/** One node:http server for everything. Every answer carries X-Request-Id; every error is the contract's body. */
export function createHttpServer(deps: AppDeps, metrics: Metrics): Server {
  const { logger } = deps;
  const table = createRouteTable(createRoutes(deps, metrics));
  const tracer = deps.tracing?.tracer;

  const { headersTimeoutMs, requestTimeoutMs } = deps.config;
  const options: ServerOptions<typeof IncomingMessage, typeof ToolgateResponse> = {
    keepAliveTimeout: 5_000,
    maxHeaderSize: MAX_HEADER_BYTES,
    ServerResponse: ToolgateResponse,
    // A slow client is cut off with 408 (docs/reference.md "Limits"). Node checks the two times
    // every connectionsCheckingInterval (30 s by default, which would double the 30 s): a tenth.
    headersTimeout: headersTimeoutMs,
    requestTimeout: requestTimeoutMs,
    connectionsCheckingInterval: Math.min(1_000, Math.max(50, Math.floor(headersTimeoutMs / 10))),
  };
  const server = createServer(options, (req, res) => {
    const started = performance.now();
    const incoming = req.headers[HEADER.requestId];
    const requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.requestId = requestId;
    const method = req.method ?? 'GET';
    const target = parseTarget(req.url ?? '/');
    if (!target) {
      discardBody(req);
      sendError(res, requestProblem('The request target is malformed.', 'Malformed URL.'));
      return;
    }
    const match = table.match(method, target.path);
    const route =
      match.kind === 'none' ? 'unknown' : match.kind === 'found' ? match.route.path : match.template;
    // Tracing off (the default), the request takes the plain path: one test of `undefined`.
    const span = tracer ? startRequestSpan(tracer, method, route, target.path, requestId) : undefined;
    const work = span
      ? withActiveSpan(span, () => dispatch(match, req, res, method, target, requestId, started))
      : dispatch(match, req, res, method, target, requestId, started);
    const finished = (status: number = res.statusCode) => {
      // A body no route read (GET /healthz with one, an answer before the body): Node drains it
      // without end once the answer is out; this bounds that (body.ts discardBody).
      if (!req.complete) discardBody(req);
      const seconds = (performance.now() - started) / 1000;
      if (span) endRequestSpan(span, status);
      metrics.observe(route, method, status, seconds);
      // At LOG_LEVEL=warn the line is not written: do not build it either (hot path, issue 14).
      if (!logger.isLevelEnabled('info')) return;
      logger.info(
        {
          requestId,
          method,
          path: target.path,
          status,
          ms: Math.round(seconds * 1000),
          ...requestLogFields(res),
        },
        'request',
      );
    };
    work.then(
      () => finished(),
      (error: unknown) => {
        // A client that went away (its body cut short, its socket closed before the answer) is
        // routine: its request line says 499, and no error or 5xx is counted (issue 23, item 4).
        if (clientGone(req, res)) return finished(CLIENT_CLOSED_REQUEST);
        logger.error({ err: error, requestId }, 'unhandled request failure');
        if (!res.headersSent)
          sendError(res, apiError('internal_error', 'The server failed to handle this request.'));
        else res.destroy();
        finished();
      },
    );
  });
  return server;
}

/** Answers what the route table found: the route's handler, or the contract's 405, 400 or 404. */
function dispatch(
  match: RouteMatch,
  req: IncomingMessage,
  res: ServerResponse,
  method: string,
  target: RequestTarget,
  requestId: string,
  started: number,
): Promise<unknown> {
  switch (match.kind) {
    case 'found':
      return match.route.handle(req, res, new MatchedRequest(target, match.params, requestId, started));
    case 'method_not_allowed':
      discardBody(req);
      sendMethodNotAllowed(res, method, match.allow);
      return Promise.resolve();
    case 'bad_path':
      discardBody(req);
      sendError(res, requestProblem('The path is not valid percent-encoding.', 'Malformed path.'));
      return Promise.resolve();
    case 'none':
      discardBody(req);
      sendError(res, apiError('not_found', 'No such path.'));
      return Promise.resolve();
  }
}

/**
 * The request's span, after the HTTP semantic conventions (server side): named by method and
 * route template; the path, never the query (it may carry a search's words, a cursor).
 */
function startRequestSpan(
  tracer: Tracer,
  method: string,
  route: string,
  path: string,
  requestId: string,
): Span {
  return tracer.startSpan(`${method} ${route}`, {
    kind: SpanKind.SERVER,
    attributes: {
      'http.request.method': method,
      'http.route': route,
      'url.path': path,
      'url.scheme': 'http',
      'toolgate.request_id': requestId,
    },
  });
}

function endRequestSpan(span: Span, status: number): void {
  span.setAttribute('http.response.status_code', status);
  if (status >= 500) {
    span.setAttribute('error.type', String(status));
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

/**
 * The status a request line and the metrics give a request whose client went away before its
 * answer was out (nginx's "client closed request"): never sent, so no client ever sees it.
 */
export const CLIENT_CLOSED_REQUEST = 499;

/** Whether the client is gone: its connection closed, or its body ended short, before our answer was out. */
function clientGone(req: IncomingMessage, res: ServerResponse): boolean {
  if (res.writableFinished) return false;
  return req.socket.destroyed || (req.destroyed && !req.complete);
}
