import { apiError } from '../../shared/errors.ts';
import type { AppDeps } from '../deps.ts';
import type { Metrics } from '../metrics.ts';
import { DOCS_ASSETS_PATH, DOCS_HEADERS, DOCS_PAGE, DOCS_PATH, docsAsset } from './docs.ts';
import { textResponse } from './openapi.ts';
import { sendError, sendJson } from './respond.ts';
import type { RouteEntry } from './route-table.ts';

const tags = ['operations'];

/**
 * What operators and readers call: health, readiness, metrics, /openapi.json, and the API
 * reference (Swagger UI from the installed package) with its files; `/` leads there.
 * `openapiJson` builds the document (routes.ts: it needs the whole table).
 */
export function operationalRoutes(
  deps: AppDeps,
  metrics: Metrics,
  openapiJson: () => Promise<string>,
): RouteEntry[] {
  const { logger } = deps;
  // Built on first request (not at start-up), once; a failure is retried by the next request.
  let openapi: Promise<string> | undefined;
  const document = () => {
    openapi ??= openapiJson();
    openapi.catch(() => {
      openapi = undefined;
    });
    return openapi;
  };

  return [
    {
      method: 'GET',
      path: '/healthz',
      openapi: {
        operationId: 'healthz',
        tags,
        summary: 'The process is up',
        security: [],
        responses: { '200': { description: '`{ "ok": true }`' } },
      },
      handle: async (_req, res) => sendJson(res, 200, { ok: true }),
    },
    {
      method: 'GET',
      path: '/readyz',
      openapi: {
        operationId: 'readyz',
        tags,
        summary: 'The database answers',
        security: [],
        responses: {
          '200': { description: '`{ "ok": true }`' },
          '503': { description: '`{ "ok": false }`: the database does not answer' },
        },
      },
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
      openapi: {
        operationId: 'metrics',
        tags,
        summary: 'Prometheus metrics',
        description:
          'Requests by route and status, tool calls by app, tool and outcome, upstream latency, OAuth refreshes, ' +
          'idempotency replays, rate-limit refusals, and the process metrics. Labels never hold user ids.',
        security: [],
        responses: { '200': textResponse('Prometheus text format') },
      },
      handle: async (_req, res) => {
        const text = await metrics.registry.metrics();
        res.writeHead(200, { 'content-type': metrics.registry.contentType });
        res.end(text);
      },
    },
    {
      method: 'GET',
      path: '/openapi.json',
      openapi: {
        operationId: 'openapi',
        tags,
        summary: 'This document (OpenAPI 3.1)',
        security: [],
        responses: { '200': { description: 'OpenAPI 3.1 document', content: { 'application/json': {} } } },
      },
      handle: async (_req, res) => {
        const json = await document();
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
        res.end(json);
      },
    },
    {
      method: 'GET',
      path: DOCS_PATH,
      openapi: {
        operationId: 'docs',
        tags,
        summary: 'This reference, browsable (served offline, no CDN)',
        security: [],
        responses: { '200': textResponse('HTML page', 'text/html') },
      },
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
  ];
}
