import { randomUUID } from 'node:crypto';
import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerOptions,
  type ServerResponse,
} from 'node:http';
import { apiError } from '../../shared/errors.ts';
import { HEADER } from '../../shared/headers.ts';
import type { AppDeps } from '../deps.ts';
import { requestLogFields } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import { discardBody } from './body.ts';
import { sendError } from './respond.ts';
import { ToolgateResponse } from './response.ts';
import { createRouteTable, MatchedRequest, parseTarget } from './route-table.ts';
import { createRoutes } from './routes.ts';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** One node:http server for everything. Every answer carries X-Request-Id; every error is the contract's body. */
export function createHttpServer(deps: AppDeps, metrics: Metrics): Server {
  const { logger } = deps;
  const table = createRouteTable(createRoutes(deps, metrics));

  const { headersTimeoutMs, requestTimeoutMs } = deps.config;
  const options: ServerOptions<typeof IncomingMessage, typeof ToolgateResponse> = {
    keepAliveTimeout: 5_000,
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
      sendError(
        res,
        apiError('invalid_request', 'The request target is malformed.', {
          issues: [{ path: '', message: 'Malformed URL.' }],
        }),
      );
      return;
    }
    let route = 'unknown';
    let work: Promise<unknown>;
    const match = table.match(method, target.path);
    switch (match.kind) {
      case 'found': {
        route = match.route.path;
        work = match.route.handle(req, res, new MatchedRequest(target, match.params, requestId, started));
        break;
      }
      case 'method_not_allowed':
        route = match.template;
        discardBody(req);
        sendError(res, apiError('method_not_allowed', `${method} is not allowed on this path.`), {
          allow: match.allow.join(', '),
        });
        work = Promise.resolve();
        break;
      case 'bad_path':
        route = match.template;
        discardBody(req);
        sendError(
          res,
          apiError('invalid_request', 'The path is not valid percent-encoding.', {
            issues: [{ path: '', message: 'Malformed path.' }],
          }),
        );
        work = Promise.resolve();
        break;
      case 'none':
        discardBody(req);
        sendError(res, apiError('not_found', 'No such path.'));
        work = Promise.resolve();
        break;
    }
    const finished = (status: number = res.statusCode) => {
      // A body no route read (GET /healthz with one, an answer before the body): Node drains it
      // without end once the answer is out; this bounds that (body.ts discardBody).
      if (!req.complete) discardBody(req);
      const seconds = (performance.now() - started) / 1000;
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
