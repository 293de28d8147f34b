import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AnyRouter } from '@trpc/server';
import type { ErrorBody } from '../../shared/errors.ts';
import type { ReadBody } from '../catalog/compiler.ts';
import { type Context, createContextInner } from '../context.ts';
import type { AppDeps } from '../deps.ts';
import { requestProblem } from '../errors.ts';
import { requestLogFields } from '../logger.ts';
import { err, ok, type Result } from '../result.ts';
import type { ProcedureMeta } from '../trpc.ts';
import { discardBody, readJsonBody, readJsonBytes } from './body.ts';
import { apiProblemOf, bodyFailure, problemBody } from './problem.ts';
import { repeatedHeader } from './repeated-headers.ts';
import { sendError, sendJson } from './respond.ts';
import type { RouteEntry, RouteRequest } from './route-table.ts';

/**
 * The REST face of the router: every procedure with `meta.openapi` is an entry of the server's
 * route table, exactly as trpc-to-openapi documents it in /openapi.json. We dispatch ourselves
 * (instead of trpc-to-openapi's handler) because the contract fixes every status and every byte
 * of the error bodies, including 413, 415 and input errors, which that handler shapes its own way.
 */

export interface ProcedureRoute {
  method: string;
  template: string;
  procedurePath: string;
  /** true when input comes from a JSON body, false when from the query string. */
  usesBody: boolean;
  /** What the procedure declares about its route (errors, body limit, fast path, examples). */
  meta: ProcedureMeta;
}

export function collectRoutes(router: AnyRouter): ProcedureRoute[] {
  const routes: ProcedureRoute[] = [];
  for (const [procedurePath, procedure] of Object.entries(router._def.procedures)) {
    const meta = (procedure as { _def: { meta?: ProcedureMeta } })._def.meta;
    const openapi = meta?.openapi;
    if (!meta || !openapi?.path || openapi.enabled === false) continue;
    routes.push({
      method: openapi.method,
      template: openapi.path,
      procedurePath,
      usesBody: openapi.method === 'POST' || openapi.method === 'PUT' || openapi.method === 'PATCH',
      meta,
    });
  }
  return routes;
}

/** The caller of the router: tRPC's createCaller applied to a context. */
export type CreateCaller = (ctx: Context) => unknown;

/** How one REST route runs: its body limit, and its procedure (the fast path, or the tRPC caller). */
interface RouteRunner {
  route: ProcedureRoute;
  bodyLimit: number;
  run: (ctx: Context, input: unknown) => Promise<unknown>;
}

/** The route-table entries of the router's REST routes. */
export function procedureRoutes(deps: AppDeps, router: AnyRouter, createCaller: CreateCaller): RouteEntry[] {
  const { config } = deps;
  return collectRoutes(router).map((route) => {
    const runner: RouteRunner = {
      route,
      bodyLimit: route.meta.bodyLimit === 'document' ? config.maxDocumentBytes : config.maxBodyBytes,
      run: route.meta.direct ?? viaCaller(createCaller, route.procedurePath),
    };
    return {
      method: route.method,
      path: route.template,
      documented: true,
      handle: (req, res, request) => handleProcedure(deps, runner, req, res, request),
    };
  });
}

/** The procedure at `procedurePath` (`admin.apps.put`) through tRPC's caller. */
function viaCaller(
  createCaller: CreateCaller,
  procedurePath: string,
): (ctx: Context, input: unknown) => Promise<unknown> {
  const keys = procedurePath.split('.');
  return (ctx, input) =>
    (
      keys.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], createCaller(ctx)) as (
        input: unknown,
      ) => Promise<unknown>
    )(input);
}

async function handleProcedure(
  deps: AppDeps,
  runner: RouteRunner,
  req: IncomingMessage,
  res: ServerResponse,
  request: RouteRequest,
): Promise<void> {
  const { route } = runner;
  const repeated = repeatedHeader(req);
  if (repeated) {
    discardBody(req);
    sendError(res, repeated);
    return;
  }
  let body: unknown;
  let document: ReadBody | undefined;
  if (route.usesBody && route.meta.bodyLimit === 'document') {
    const read = await readDocumentBody(deps, req, runner.bodyLimit);
    if (!read.ok) {
      sendError(res, read.error);
      return;
    }
    ({ body, document } = read.value);
  } else if (route.usesBody) {
    const read = await readJsonBody(req, runner.bodyLimit);
    if (!read.ok) {
      sendError(res, bodyFailure(read.error, runner.bodyLimit));
      return;
    }
    body = read.value;
  } else {
    discardBody(req);
  }

  const ctx = createContextInner(deps, {
    surface: 'rest',
    requestId: request.requestId,
    headers: req.headers,
    startedAt: request.startedAt,
    remoteAddress: req.socket.remoteAddress,
    logFields: requestLogFields(res),
    document,
  });
  try {
    const output = await runner.run(ctx, routeInput(route, request, body));
    sendJson(res, ctx.response.status ?? 200, output, ctx.response.headers);
  } catch (error) {
    const problem = problemBody(error);
    if (problem.error === 'internal_error')
      ctx.log().error({ err: error, route: route.template }, 'request failed');
    sendError(res, problem, apiProblemOf(error)?.headers ?? {});
  }
}

/**
 * A body that may hold a whole OpenAPI document (`bodyLimit: 'document'`), parsed on the compile
 * worker: decoding, checking and parsing GitHub's 13 MB on the event loop held every other request
 * for about 0.4 s. The body comes back with its document stood in for, and the document is
 * compiled from the bytes (`document`, server/catalog/compiler.ts). Refusals are readJsonBody's.
 */
async function readDocumentBody(
  deps: AppDeps,
  req: IncomingMessage,
  limit: number,
): Promise<Result<{ body: unknown; document: ReadBody | undefined }, ErrorBody>> {
  const bytes = await readJsonBytes(req, limit);
  if (!bytes.ok) return err(bodyFailure(bytes.error, limit));
  if (bytes.value === undefined) return ok({ body: undefined, document: undefined });
  const read = await deps.apps.compiler.readBody(bytes.value);
  if (read.ok) return ok({ body: read.value.body, document: read.value.document ?? undefined });
  if (typeof read.error === 'string') return err(bodyFailure(read.error, limit));
  const { refused } = read.error;
  return err(requestProblem(refused));
}

/**
 * The procedure's input: query or JSON body, with path parameters on top. A query name given more
 * than once keeps every value, joined by commas: a list parameter (`apps=a&apps=b`) then reads as
 * `apps=a,b`, and a single-valued one (`limit=5&limit=6`) is refused by its schema rather than
 * silently reduced to its first value.
 */
export function routeInput(route: ProcedureRoute, request: RouteRequest, body: unknown): unknown {
  const { params } = request;
  if (route.usesBody) {
    if (body === undefined) return { ...params };
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
    // The parsed body is this request's own: without path parameters it is the input as it is.
    return isEmpty(params) ? body : { ...(body as Record<string, unknown>), ...params };
  }
  const query: Record<string, string> = {};
  if (request.hasQuery)
    for (const [name, value] of request.url.searchParams)
      query[name] = name in query ? `${query[name]},${value}` : value;
  return { ...query, ...params };
}

/** No own enumerable key (without building the array of them). */
function isEmpty(record: Record<string, string>): boolean {
  for (const _ in record) return false;
  return true;
}
