import type { IncomingMessage, ServerResponse } from 'node:http';
import { nodeHTTPRequestHandler } from '@trpc/server/adapters/node-http';
import { statusOf } from '../../shared/errors.ts';
import { LIMITS } from '../config.ts';
import { createContextInner } from '../context.ts';
import type { AppDeps } from '../deps.ts';
import { requestProblem } from '../errors.ts';
import { requestLogFields } from '../logger.ts';
import { appRouter } from '../routers/_app.ts';
import { discardBody, nestsTooDeep, readJsonBody } from './body.ts';
import { bodyFailure, problemBody, trpcErrorEnvelope } from './problem.ts';
import { repeatedHeader } from './repeated-headers.ts';
import { sendJson } from './respond.ts';
import type { RouteEntry, RouteRequest } from './route-table.ts';

const TRPC_PREFIX = '/trpc/';

/** tRPC under /trpc (the typed SDK's transport). tRPC answers every method itself (its own 405 for a query sent as POST, and so on). */
export function trpcMount(deps: AppDeps): RouteEntry {
  return {
    method: '*',
    path: `${TRPC_PREFIX}{procedure}`,
    handle: (req, res, request) => handleTrpc(deps, req, res, request),
  };
}

async function handleTrpc(
  deps: AppDeps,
  req: IncomingMessage & { body?: unknown },
  res: ServerResponse,
  request: RouteRequest,
): Promise<void> {
  const { config, logger } = deps;
  const { path, requestId } = request;
  const procedures = path.slice(TRPC_PREFIX.length);
  const repeated = repeatedHeader(req);
  if (repeated) {
    discardBody(req);
    sendJson(res, statusOf(repeated.error), trpcErrorEnvelope(repeated));
    return;
  }
  if (request.hasQuery && request.url.searchParams.has('batch')) {
    const calls = procedures.split(',').length;
    if (calls > LIMITS.trpcMaxBatch) {
      discardBody(req);
      const body = requestProblem(
        `A batch may hold at most ${LIMITS.trpcMaxBatch} calls.`,
        `This batch holds ${calls} calls.`,
      );
      sendJson(res, statusOf(body.error), trpcErrorEnvelope(body));
      return;
    }
  }
  // The body checks of REST (415, 413, malformed, nesting deeper than 128), done once here, so
  // tRPC gets a parsed value and no walk of the input can overflow the stack.
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    const read = await readJsonBody(req, config.maxBodyBytes);
    if (!read.ok) {
      const body = bodyFailure(read.error, config.maxBodyBytes);
      sendJson(res, statusOf(body.error), trpcErrorEnvelope(body));
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
        surface: 'trpc',
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
