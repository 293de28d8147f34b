import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { nodeHTTPRequestHandler } from '@trpc/server/adapters/node-http';
import { apiError, type ErrorBody, statusOf } from '../shared/errors.ts';
import { HEADER } from '../shared/headers.ts';
import { readJsonBody } from './body.ts';
import { createContextInner } from './context.ts';
import type { AppDeps } from './deps.ts';
import { renderDocs } from './docs.ts';
import type { Metrics } from './metrics.ts';
import { handleOAuthCallback } from './oauth/callback.ts';
import { CALLBACK_PATH } from './oauth/state.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { ApiProblem } from './problem.ts';
import { collectRoutes, matchRoute, routeInput } from './rest.ts';
import { appRouter } from './routers/_app.ts';
import { createCallerFactory, problemBody } from './trpc.ts';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const createCaller = createCallerFactory(appRouter);
const routes = collectRoutes(appRouter);

type Handler = (
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  requestId: string,
  startedAt: number,
) => Promise<string>;

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(payload),
  });
  res.end(payload);
}

export function sendError(res: ServerResponse, body: ErrorBody, headers: Record<string, string> = {}): void {
  sendJson(res, statusOf(body.error), body, headers);
}

/**
 * One node:http server for everything: tRPC under /trpc, the REST routes of the procedures,
 * and the operational paths. Every answer carries X-Request-Id; every error is the contract's body.
 */
export function createHttpServer(deps: AppDeps, metrics: Metrics): Server {
  const { config, logger } = deps;
  let openapi: { json: string; docs: string } | undefined;
  const documents = () => {
    if (!openapi) {
      const document = buildOpenApiDocument(appRouter, config.publicUrl);
      openapi = { json: JSON.stringify(document), docs: renderDocs(document) };
    }
    return openapi;
  };

  const fixed: Record<string, Record<string, Handler>> = {
    '/healthz': {
      GET: async (_req, res) => {
        sendJson(res, 200, { ok: true });
        return '/healthz';
      },
    },
    '/readyz': {
      GET: async (_req, res) => {
        try {
          await deps.db.ping();
          sendJson(res, 200, { ok: true });
        } catch (error) {
          logger.warn({ err: error }, 'readiness check failed');
          sendJson(res, 503, { ok: false });
        }
        return '/readyz';
      },
    },
    '/metrics': {
      GET: async (_req, res) => {
        const text = await metrics.registry.metrics();
        res.writeHead(200, { 'content-type': metrics.registry.contentType });
        res.end(text);
        return '/metrics';
      },
    },
    '/openapi.json': {
      GET: async (_req, res) => {
        const body = documents().json;
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
        res.end(body);
        return '/openapi.json';
      },
    },
    // Not a procedure: it answers 302 to the client's registered URI (or 400 state_invalid).
    [CALLBACK_PATH]: {
      GET: async (req, res, url, requestId) => {
        req.resume();
        const outcome = await handleOAuthCallback(deps, url.searchParams, logger.child({ requestId }));
        const headers = { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' };
        if (outcome.kind === 'invalid') sendError(res, outcome.body, headers);
        else {
          res.writeHead(302, { ...headers, location: outcome.location, 'content-length': '0' });
          res.end();
        }
        return CALLBACK_PATH;
      },
    },
    '/docs': {
      GET: async (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(documents().docs);
        return '/docs';
      },
    },
  };

  async function handleTrpc(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    requestId: string,
  ): Promise<string> {
    await nodeHTTPRequestHandler({
      req,
      res,
      router: appRouter,
      path: url.pathname.slice('/trpc/'.length),
      maxBodySize: config.maxBodyBytes,
      createContext: () => createContextInner(deps, { requestId, headers: req.headers }),
      onError: ({ error, path }) => {
        if (problemBody(error).error === 'internal_error')
          logger.error({ err: error, requestId, path }, 'trpc failure');
      },
    });
    return '/trpc';
  }

  async function handleRest(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    requestId: string,
    startedAt: number,
  ): Promise<string> {
    const method = req.method ?? 'GET';
    const match = matchRoute(routes, method, url.pathname);
    if (match.kind === 'none') {
      sendError(res, apiError('not_found', 'No such path.'));
      return 'unknown';
    }
    if (match.kind === 'bad_path') {
      sendError(
        res,
        apiError('invalid_request', 'The path is not valid percent-encoding.', {
          issues: [{ path: '', message: 'Malformed path.' }],
        }),
      );
      return 'unknown';
    }
    if (match.kind === 'method_not_allowed') {
      sendError(res, apiError('method_not_allowed', `${method} is not allowed on this path.`), {
        allow: match.allow.join(', '),
      });
      return match.template;
    }
    const { route, params } = match;
    let body: unknown;
    if (route.usesBody) {
      const read = await readJsonBody(req, config.maxBodyBytes);
      if (!read.ok) {
        if (read.error === 'payload_too_large') {
          sendError(
            res,
            apiError('payload_too_large', `The body is larger than ${config.maxBodyBytes} bytes.`, {
              limit: config.maxBodyBytes,
            }),
            { connection: 'close' },
          );
        } else if (read.error === 'unsupported_media_type') {
          sendError(res, apiError('unsupported_media_type', 'The body must be application/json.'));
        } else {
          sendError(
            res,
            apiError('invalid_request', 'The body is not valid JSON.', {
              issues: [{ path: '', message: 'Malformed JSON.' }],
            }),
          );
        }
        return route.template;
      }
      body = read.value;
    } else {
      req.resume();
    }

    const ctx = createContextInner(deps, { requestId, headers: req.headers, startedAt });
    const caller = createCaller(ctx) as unknown as Record<string, unknown>;
    const call = route.procedurePath
      .split('.')
      .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], caller) as (
      input: unknown,
    ) => Promise<unknown>;
    try {
      const output = await call(routeInput(route, params, url, body));
      sendJson(res, ctx.response.status ?? 200, output, ctx.response.headers);
    } catch (error) {
      const problem = problemBody(error);
      if (problem.error === 'internal_error')
        ctx.log.error({ err: error, route: route.template }, 'request failed');
      sendError(res, problem, error instanceof ApiProblem ? error.headers : {});
    }
    return route.template;
  }

  const server = createServer({ keepAliveTimeout: 5_000 }, (req, res) => {
    const started = performance.now();
    const incoming = req.headers[HEADER.requestId];
    const requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('x-request-id', requestId);
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://localhost');
    } catch {
      sendError(
        res,
        apiError('invalid_request', 'The request target is malformed.', {
          issues: [{ path: '', message: 'Malformed URL.' }],
        }),
      );
      return;
    }
    const method = req.method ?? 'GET';
    const fixedRoute = fixed[url.pathname];
    let work: Promise<string>;
    if (fixedRoute) {
      // HEAD is GET without a body, except on the callback, where a GET spends the state.
      const handler =
        fixedRoute[method] ??
        (method === 'HEAD' && url.pathname !== CALLBACK_PATH ? fixedRoute.GET : undefined);
      if (handler) {
        work = handler(req, res, url, requestId, started);
      } else {
        sendError(res, apiError('method_not_allowed', `${method} is not allowed on this path.`), {
          allow: Object.keys(fixedRoute).join(', '),
        });
        work = Promise.resolve(url.pathname);
      }
    } else if (url.pathname.startsWith('/trpc/')) {
      work = handleTrpc(req, res, url, requestId);
    } else {
      work = handleRest(req, res, url, requestId, started);
    }
    work
      .catch((error: unknown) => {
        logger.error({ err: error, requestId }, 'unhandled request failure');
        if (!res.headersSent)
          sendError(res, apiError('internal_error', 'The server failed to handle this request.'));
        else res.destroy();
        return 'unknown';
      })
      .then((route) => {
        const seconds = (performance.now() - started) / 1000;
        metrics.observe(route, method, res.statusCode, seconds);
        logger.info(
          { requestId, method, path: url.pathname, status: res.statusCode, ms: Math.round(seconds * 1000) },
          'request',
        );
      });
  });
  return server;
}
