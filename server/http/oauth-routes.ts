import type { AppDeps } from '../deps.ts';
import { handleOAuthCallback } from '../oauth/callback.ts';
import { completePage } from '../oauth/complete-page.ts';
import { CLIENT_METADATA_PATH, clientMetadataDocument } from '../oauth/discover.ts';
import { CALLBACK_PATH, COMPLETE_PATH } from '../oauth/state.ts';
import { discardBody } from './body.ts';
import { errorResponses, textResponse } from './openapi.ts';
import { sendError, sendJson } from './respond.ts';
import type { RouteEntry } from './route-table.ts';

/** The end-user OAuth paths that are not procedures: the provider's callback, and the page MCP flows end on. */
export function oauthRoutes(deps: AppDeps): RouteEntry[] {
  const { logger } = deps;
  return [
    // It answers 302 to the client's registered URI (or 400 state_invalid). No HEAD: a GET spends the state.
    {
      method: 'GET',
      path: CALLBACK_PATH,
      head: false,
      openapi: {
        operationId: 'handleOAuthCallback',
        tags: ['oauth'],
        summary: "The provider's redirect back to toolgate at the end of an end-user OAuth flow",
        description:
          'On success, 302 to the registered clientRedirectUri with `status=success`; when the state is known but ' +
          'expired, used, denied or the exchange failed, 302 with `status=error&reason=<code>`; when the state is ' +
          'missing or unknown, 400 `state_invalid`.',
        security: [],
        parameters: ['state', 'code', 'error', 'error_description', 'iss'].map((name) => ({
          name,
          in: 'query' as const,
          required: name === 'state',
          schema: { type: 'string' as const },
        })),
        responses: {
          '302': {
            description: 'Redirect to the client redirect URI with status=success or status=error&reason=…',
          },
          ...errorResponses(['state_invalid', 'method_not_allowed', 'internal_error']),
        },
      },
      handle: async (req, res, { url, requestId }) => {
        discardBody(req);
        const outcome = await handleOAuthCallback(deps, url.searchParams, logger.child({ requestId }));
        const headers = { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' };
        if (!outcome.ok) sendError(res, outcome.error, headers);
        else {
          res.writeHead(302, { ...headers, location: outcome.value, 'content-length': '0' });
          res.end();
        }
      },
    },
    // toolgate's Client ID Metadata Document: how the authorization server of an MCP server knows
    // toolgate as its client, by this URL alone (docs/reference.md "Apps from MCP servers").
    {
      method: 'GET',
      path: CLIENT_METADATA_PATH,
      handle: async (req, res) => {
        discardBody(req);
        sendJson(res, 200, clientMetadataDocument(deps.config.publicUrl), {
          'access-control-allow-origin': '*',
          'cache-control': 'max-age=3600',
        });
      },
    },
    // Where an authorization started from MCP ends: a page for the user, never a token or code.
    {
      method: 'GET',
      path: COMPLETE_PATH,
      openapi: {
        operationId: 'oauthComplete',
        tags: ['oauth'],
        summary: 'The page an authorization started from MCP ends on',
        description:
          'A short HTML page telling the user the outcome of the flow named by `flow` (an id the callback puts ' +
          'there), as the server recorded it; an unknown id gets a neutral page. It never shows a token or a code.',
        security: [],
        parameters: [
          { name: 'flow', in: 'query' as const, required: false, schema: { type: 'string' as const } },
        ],
        responses: { '200': textResponse('HTML page', 'text/html') },
      },
      handle: async (req, res, { url }) => {
        discardBody(req);
        const page = await completePage(deps, url.searchParams);
        res.writeHead(200, page.headers);
        res.end(page.html);
      },
    },
  ];
}
