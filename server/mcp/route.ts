import type { AppDeps } from '../deps.ts';
import { errorResponses } from '../http/openapi.ts';
import { lazyHandler, type RouteEntry } from '../http/route-table.ts';
import { MCP_PATH } from './path.ts';

/**
 * The /mcp entries of the route table (docs/reference.md "MCP"): POST, documented; and every other
 * method to the same handler, which answers a browser's CORS preflight and, to anything else, the
 * contract's 405 (Allow: POST) — itself rather than the table, so that an admitted browser Origin
 * can read that 405 too (cors.ts). The MCP SDK (about 25 MB) loads on the first /mcp request, not
 * at start (idle RSS, issue 14): the handler (http.ts) is imported then.
 */
export function mcpRoutes(deps: AppDeps): RouteEntry[] {
  const handle = lazyHandler(() => import('./http.ts').then((mcp) => mcp.createMcpRoute(deps)));
  return [
    { method: 'POST', path: MCP_PATH, openapi: MCP_OPERATION, handle },
    { method: '*', path: MCP_PATH, handle },
  ];
}

const MCP_OPERATION = {
  operationId: 'mcp',
  tags: ['operations'],
  summary: 'The tools for Model Context Protocol clients (Streamable HTTP, stateless)',
  description:
    'JSON-RPC over Streamable HTTP: `tools/list` lists what `GET /tools` lists for the key, `tools/call` runs a ' +
    'tool like `POST /proxyV2`. Same headers as the agent routes; optional query `apps=<appId>,<appId>` and ' +
    '`mode=auto|all|search` (search: only `search_tools` and `call_tool` are listed; auto, the default: search ' +
    'when the catalog holds more than MCP_MAX_LISTED_TOOLS tools). ' +
    'Both protocol eras are served (2026-07-28 without handshake; 2025-11-25 / 2025-06-18 with a stateless ' +
    "`initialize`). GET and DELETE answer 405. A browser `Origin` other than PUBLIC_URL's, one in " +
    'MCP_ALLOWED_ORIGINS or (on a loopback server) an http loopback origin, or a foreign `Host`, answers 403; ' +
    'an admitted Origin gets CORS (preflight `OPTIONS` answered 204, `Access-Control-Allow-Origin` on every answer).',
  parameters: [
    {
      name: 'apps',
      in: 'query',
      required: false,
      schema: { type: 'string' },
      description: 'appId,appId',
    },
    {
      name: 'mode',
      in: 'query',
      required: false,
      schema: { type: 'string', enum: ['auto', 'all', 'search'], default: 'auto' },
      description: 'The whole catalog (all), the search pair (search), or either by the catalog size (auto).',
    },
  ],
  requestBody: {
    required: true,
    content: {
      'application/json': {
        schema: { type: 'object' },
        example: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
      },
    },
  },
  responses: {
    '200': {
      description: 'The JSON-RPC answer (application/json or text/event-stream).',
      content: { 'application/json': { schema: { type: 'object' } } },
    },
    ...errorResponses(['invalid_api_key', 'invalid_client', 'method_not_allowed', 'internal_error']),
    '403': {
      description: 'A browser Origin this server does not admit, or a Host it does not serve.',
    },
  },
};
