import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { nodeHTTPRequestHandler } from '@trpc/server/adapters/node-http';
import { apiError, statusOf } from '../../shared/errors.ts';
import { HEADER } from '../../shared/headers.ts';
import { LIMITS } from '../config.ts';
import { createContextInner } from '../context.ts';
import type { AppDeps } from '../deps.ts';
import { requestLogFields } from '../logger.ts';
import { MCP_PATH } from '../mcp/path.ts';
import type { Metrics } from '../metrics.ts';
import { handleOAuthCallback } from '../oauth/callback.ts';
import { renderCompletePage } from '../oauth/complete-page.ts';
import { CALLBACK_PATH, COMPLETE_PATH } from '../oauth/state.ts';
import { appRouter } from '../routers/_app.ts';
import { serveProxy } from '../routers/agent/proxy.ts';
import { createCallerFactory, problemBody, trpcErrorEnvelope } from '../trpc.ts';
import { nestsTooDeep, readJsonBody } from './body.ts';
import { DOCS_ASSETS_PATH, DOCS_HEADERS, DOCS_PAGE, DOCS_PATH, docsAsset } from './docs.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { sendError, sendJson } from './respond.ts';
import { ToolgateResponse } from './response.ts';
import { bodyFailure, procedureRoutes } from './rest.ts';
import {
  createRouteTable,
  MatchedRequest,
  parseTarget,
  type RouteEntry,
  type RouteHandler,
  type RouteRequest,
} from './route-table.ts';

export { sendError, sendJson } from './respond.ts';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const createCaller = createCallerFactory(appRouter);
const TRPC_PREFIX = '/trpc/';

/**
 * The server's ONE route table (route-table.ts): the REST routes of the procedures, tRPC
 * under /trpc, the OAuth callback and the operational paths. To add a path, add an entry here;
 * 404, 405 + Allow and HEAD come from the table. An entry that /openapi.json describes says
 * `documented: true` (a test holds the two to each other).
 */
export function createRoutes(deps: AppDeps, metrics: Metrics): RouteEntry[] {
  const { config, logger } = deps;
  // Built on first request (not at start-up), once; a failure is retried by the next request.
  let openapi: Promise<string> | undefined;
  const openapiJson = () => {
    openapi ??= buildOpenApiDocument(appRouter, config.publicUrl).then(JSON.stringify);
    openapi.catch(() => {
      openapi = undefined;
    });
    return openapi;
  };

  async function handleTrpc(
    req: IncomingMessage & { body?: unknown },
    res: ServerResponse,
    request: RouteRequest,
  ): Promise<void> {
    const { path, requestId } = request;
    const procedures = path.slice(TRPC_PREFIX.length);
    if (request.hasQuery && request.url.searchParams.has('batch')) {
      const calls = procedures.split(',').length;
      if (calls > LIMITS.trpcMaxBatch) {
        req.resume();
        const body = apiError('invalid_request', `A batch may hold at most ${LIMITS.trpcMaxBatch} calls.`, {
          issues: [{ path: '', message: `This batch holds ${calls} calls.` }],
        });
        sendJson(res, statusOf(body.error), trpcErrorEnvelope(body));
        return;
      }
    }
    // The body checks of REST (415, 413, malformed, nesting deeper than 128), done once here, so
    // tRPC gets a parsed value and no walk of the input can overflow the stack.
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      const read = await readJsonBody(req, config.maxBodyBytes);
      if (!read.ok) {
        const headers: Record<string, string> =
          read.error === 'payload_too_large' ? { connection: 'close' } : {};
        const body = bodyFailure(read.error, config.maxBodyBytes);
        sendJson(res, statusOf(body.error), trpcErrorEnvelope(body), headers);
        return;
      }
      req.body = read.value;
    } else {
      const input = request.hasQuery ? request.url.searchParams.get('input') : null;
      if (input !== null && nestsTooDeep(input)) {
        const body = bodyFailure('too_deep', config.maxBodyBytes);
        sendJson(res, statusOf(body.error), trpcErrorEnvelope(body));
        return;
      }
    }
    await nodeHTTPRequestHandler({
      req,
      res,
      router: appRouter,
      path: procedures,
      maxBodySize: config.maxBodyBytes,
      createContext: () =>
        createContextInner(deps, {
          requestId,
          headers: req.headers,
          remoteAddress: req.socket.remoteAddress,
          logFields: requestLogFields(res),
        }),
      onError: ({ error, path }) => {
        const problem = problemBody(error, config.maxBodyBytes);
        requestLogFields(res).error = problem.error;
        // A caller's mistake is routine: one info line, no stack. Only our own failures are errors.
        if (problem.error === 'internal_error') logger.error({ err: error, requestId, path }, 'trpc failure');
        else logger.info({ requestId, path, error: problem.error }, 'trpc call refused');
      },
    });
  }

  const routes: RouteEntry[] = [
    {
      method: 'GET',
      path: '/healthz',
      documented: true,
      handle: async (_req, res) => sendJson(res, 200, { ok: true }),
    },
    {
      method: 'GET',
      path: '/readyz',
      documented: true,
      handle: async (_req, res) => {
        try {
          await deps.db.ping();
          sendJson(res, 200, { ok: true });
        } catch (error) {
          logger.warn({ err: error }, 'readiness check failed');
          sendJson(res, 503, { ok: false });
        }
      },
    },
    {
      method: 'GET',
      path: '/metrics',
      documented: true,
      handle: async (_req, res) => {
        const text = await metrics.registry.metrics();
        res.writeHead(200, { 'content-type': metrics.registry.contentType });
        res.end(text);
      },
    },
    {
      method: 'GET',
      path: '/openapi.json',
      documented: true,
      handle: async (_req, res) => {
        const json = await openapiJson();
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
        res.end(json);
      },
    },
    // The API reference (Swagger UI from the installed package) and its files; / leads there.
    {
      method: 'GET',
      path: DOCS_PATH,
      documented: true,
      handle: async (_req, res) => {
        res.writeHead(200, { ...DOCS_HEADERS, 'content-type': 'text/html; charset=utf-8' });
        res.end(DOCS_PAGE);
      },
    },
    {
      method: 'GET',
      path: DOCS_ASSETS_PATH,
      handle: async (_req, res, request) => {
        const asset = await docsAsset(request.params.file ?? '');
        if (!asset) return sendError(res, apiError('not_found', 'No such path.'));
        res.writeHead(200, {
          'content-type': asset.type,
          'content-length': asset.body.length,
          'cache-control': 'public, max-age=3600',
          'x-content-type-options': 'nosniff',
        });
        res.end(asset.body);
      },
    },
    {
      method: 'GET',
      path: '/',
      handle: async (_req, res) => {
        res.writeHead(302, { location: DOCS_PATH, 'content-length': '0' });
        res.end();
      },
    },
    // Not a procedure: it answers 302 to the client's registered URI (or 400 state_invalid).
    // No HEAD: a GET spends the state.
    {
      method: 'GET',
      path: CALLBACK_PATH,
      head: false,
      documented: true,
      handle: async (req, res, { url, requestId }) => {
        req.resume();
        const outcome = await handleOAuthCallback(deps, url.searchParams, logger.child({ requestId }));
        const headers = { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' };
        if (!outcome.ok) sendError(res, outcome.error, headers);
        else {
          res.writeHead(302, { ...headers, location: outcome.value, 'content-length': '0' });
          res.end();
        }
      },
    },
    // tRPC answers every method itself (its own 405 for a query sent as POST, and so on).
    {
      method: '*',
      path: `${TRPC_PREFIX}{procedure}`,
      handle: (req, res, request) => handleTrpc(req, res, request),
    },
    // MCP (docs/reference.md "MCP"): POST only; GET and DELETE (2025 session operations) get the table's 405.
    // The MCP SDK (about 25 MB) loads on the first /mcp request, not at start (idle RSS, issue 14).
    {
      method: 'POST',
      path: MCP_PATH,
      documented: true,
      handle: lazyHandler(() => import('../mcp/http.ts').then((mcp) => mcp.createMcpRoute(deps))),
    },
    // Where an authorization started from MCP ends: a page for the user, never a token or code.
    {
      method: 'GET',
      path: COMPLETE_PATH,
      documented: true,
      handle: async (req, res, { url }) => {
        req.resume();
        res.writeHead(200, {
          'content-type': 'text/html; charset=utf-8',
          'cache-control': 'no-store',
          'referrer-policy': 'no-referrer',
          'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
        });
        res.end(renderCompletePage(url.searchParams));
      },
    },
    ...procedureRoutes(deps, appRouter, {
      createCaller: (ctx) => createCaller(ctx),
      // /proxyV2, the hot path: the procedure's steps without the tRPC caller (bench, issue 14).
      direct: { proxy: serveProxy },
      // An app registration carries a whole OpenAPI document (GitHub's is 11 MB).
      bodyLimit: (route) =>
        route.method === 'PUT' && route.template === '/admin/apps/{appId}'
          ? config.maxDocumentBytes
          : config.maxBodyBytes,
    }),
  ];
  return routes;
}

/** A handler built on its first request (one build, however many requests wait; retried if it failed). */
function lazyHandler(build: () => Promise<RouteHandler>): RouteHandler {
  let handler: Promise<RouteHandler> | undefined;
  return async (...args) => {
    handler ??= build();
    handler.catch(() => {
      handler = undefined;
    });
    return (await handler)(...args);
  };
}

/** One node:http server for everything. Every answer carries X-Request-Id; every error is the contract's body. */
export function createHttpServer(deps: AppDeps, metrics: Metrics): Server {
  const { logger } = deps;
  const table = createRouteTable(createRoutes(deps, metrics));

  const server = createServer({ keepAliveTimeout: 5_000, ServerResponse: ToolgateResponse }, (req, res) => {
    const started = performance.now();
    const incoming = req.headers[HEADER.requestId];
    const requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.requestId = requestId;
    const method = req.method ?? 'GET';
    const target = parseTarget(req.url ?? '/');
    if (!target) {
      req.resume();
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
        req.resume();
        sendError(res, apiError('method_not_allowed', `${method} is not allowed on this path.`), {
          allow: match.allow.join(', '),
        });
        work = Promise.resolve();
        break;
      case 'bad_path':
        route = match.template;
        req.resume();
        sendError(
          res,
          apiError('invalid_request', 'The path is not valid percent-encoding.', {
            issues: [{ path: '', message: 'Malformed path.' }],
          }),
        );
        work = Promise.resolve();
        break;
      case 'none':
        req.resume();
        sendError(res, apiError('not_found', 'No such path.'));
        work = Promise.resolve();
        break;
    }
    const finished = () => {
      const seconds = (performance.now() - started) / 1000;
      metrics.observe(route, method, res.statusCode, seconds);
      // At LOG_LEVEL=warn the line is not written: do not build it either (hot path, issue 14).
      if (!logger.isLevelEnabled('info')) return;
      logger.info(
        {
          requestId,
          method,
          path: target.path,
          status: res.statusCode,
          ms: Math.round(seconds * 1000),
          ...requestLogFields(res),
        },
        'request',
      );
    };
    work.then(finished, (error: unknown) => {
      logger.error({ err: error, requestId }, 'unhandled request failure');
      if (!res.headersSent)
        sendError(res, apiError('internal_error', 'The server failed to handle this request.'));
      else res.destroy();
      finished();
    });
  });
  return server;
}
