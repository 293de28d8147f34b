import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AnyRouter } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { apiError, type ErrorBody } from '../../shared/errors.ts';
import { type Context, createContextInner } from '../context.ts';
import type { AppDeps } from '../deps.ts';
import { requestLogFields } from '../logger.ts';
import { problemBody } from '../trpc.ts';
import { type BodyFailure, readJsonBody } from './body.ts';
import { ApiProblem } from './problem.ts';
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
}

export function collectRoutes(router: AnyRouter): ProcedureRoute[] {
  const routes: ProcedureRoute[] = [];
  for (const [procedurePath, procedure] of Object.entries(router._def.procedures)) {
    const openapi = (procedure as { _def: { meta?: OpenApiMeta } })._def.meta?.openapi;
    if (!openapi?.path || openapi.enabled === false) continue;
    routes.push({
      method: openapi.method,
      template: openapi.path,
      procedurePath,
      usesBody: openapi.method === 'POST' || openapi.method === 'PUT' || openapi.method === 'PATCH',
    });
  }
  return routes;
}

/** The contract body for a body that could not be read. */
export function bodyFailure(failure: BodyFailure, limit: number): ErrorBody {
  switch (failure) {
    case 'payload_too_large':
      return apiError('payload_too_large', `The body is larger than ${limit} bytes.`, { limit });
    case 'unsupported_media_type':
      return apiError('unsupported_media_type', 'The body must be application/json.');
    case 'too_deep':
      return apiError('invalid_request', 'The body is nested too deeply.', {
        issues: [{ path: '', message: 'JSON nested deeper than 128 levels.' }],
      });
    case 'malformed_json':
      return apiError('invalid_request', 'The body is not valid JSON.', {
        issues: [{ path: '', message: 'Malformed JSON.' }],
      });
  }
}

export interface ProcedureRouteOptions {
  /** The caller of the router (tRPC's createCaller applied to a context). */
  createCaller: (ctx: ReturnType<typeof createContextInner>) => unknown;
  /** The body limit of a route (PUT of a whole document may allow more than MAX_BODY_BYTES). */
  bodyLimit: (route: ProcedureRoute) => number;
  /**
   * Procedures (by path) whose REST route runs a function doing the procedure's own steps instead
   * of the tRPC caller: for the hot path, where tRPC's per-level context copies show.
   */
  direct?: Readonly<Record<string, (ctx: Context, input: unknown) => Promise<unknown>>>;
}

/** The route-table entries of the router's REST routes. */
export function procedureRoutes(
  deps: AppDeps,
  router: AnyRouter,
  options: ProcedureRouteOptions,
): RouteEntry[] {
  return collectRoutes(router).map((route) => ({
    method: route.method,
    path: route.template,
    documented: true,
    handle: (req, res, request) => handleProcedure(deps, options, route, req, res, request),
  }));
}

async function handleProcedure(
  deps: AppDeps,
  options: ProcedureRouteOptions,
  route: ProcedureRoute,
  req: IncomingMessage,
  res: ServerResponse,
  request: RouteRequest,
): Promise<void> {
  let body: unknown;
  if (route.usesBody) {
    const limit = options.bodyLimit(route);
    const read = await readJsonBody(req, limit);
    if (!read.ok) {
      const headers: Record<string, string> =
        read.error === 'payload_too_large' ? { connection: 'close' } : {};
      sendError(res, bodyFailure(read.error, limit), headers);
      return;
    }
    body = read.value;
  } else {
    req.resume();
  }

  const ctx = createContextInner(deps, {
    requestId: request.requestId,
    headers: req.headers,
    startedAt: request.startedAt,
    remoteAddress: req.socket.remoteAddress,
    logFields: requestLogFields(res),
  });
  const direct = options.direct?.[route.procedurePath];
  try {
    const input = routeInput(route, request, body);
    const output = direct
      ? await direct(ctx, input)
      : await (
          route.procedurePath
            .split('.')
            .reduce<unknown>(
              (node, key) => (node as Record<string, unknown>)[key],
              options.createCaller(ctx),
            ) as (input: unknown) => Promise<unknown>
        )(input);
    sendJson(res, ctx.response.status ?? 200, output, ctx.response.headers);
  } catch (error) {
    const problem = problemBody(error);
    if (problem.error === 'internal_error')
      ctx.log().error({ err: error, route: route.template }, 'request failed');
    sendError(res, problem, error instanceof ApiProblem ? error.headers : {});
  }
}

/** The procedure's input: query (first value of each name) or JSON body, with path parameters on top. */
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
    for (const [name, value] of request.url.searchParams) if (!(name in query)) query[name] = value;
  return { ...query, ...params };
}

/** No own enumerable key (without building the array of them). */
function isEmpty(record: Record<string, string>): boolean {
  for (const _ in record) return false;
  return true;
}
