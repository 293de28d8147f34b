import type { IncomingMessage, ServerResponse } from 'node:http';
import { HEADER } from '../../shared/headers.ts';
import { headerValue } from '../context.ts';

/**
 * CORS on /mcp (docs/reference.md "MCP"), so that a browser MCP client (the MCP Inspector's direct
 * mode, a web agent) can call it. Which origins get these headers is not decided here: only an
 * Origin the DNS-rebinding guard admitted (http.ts, the one rule for both) is ever passed in; any
 * other Origin has its 403 without them, and a request without Origin gets none of this.
 * No Access-Control-Allow-Credentials: /mcp reads no cookie, every credential is a header the page
 * sends itself.
 */

/**
 * POST is the protocol; GET and DELETE answer 405, which a client must be able to read as "no GET
 * stream" / "no session to end" (the 2025-era SDK probes GET after `initialize`) rather than as a
 * network failure.
 */
const ALLOW_METHODS = 'POST, GET, DELETE';

/** What MCP clients send (MCP Streamable HTTP, SEP-2243's Mcp-Method/Mcp-Name) and ours (contract §1). */
const ALLOW_HEADERS = [
  HEADER.authorization,
  'content-type',
  'accept',
  'mcp-protocol-version',
  'mcp-session-id',
  'mcp-method',
  'mcp-name',
  'last-event-id',
  HEADER.clientId,
  HEADER.userId,
  HEADER.requestId,
];

/**
 * SEP-2243 (2026-07-28): a tool may declare arguments the client mirrors into `Mcp-Param-<Name>`
 * headers, a name per tool that no fixed list can hold; a requested one that is a valid field name
 * (RFC 9110 token) is allowed as asked.
 */
const MCP_PARAM_HEADER = /^mcp-param-[!#$%&'*+.^_`|~0-9a-z-]+$/;

/** What a client reads from an answer besides the CORS-safelisted ones (Content-Type…). */
const EXPOSE_HEADERS = [
  'www-authenticate',
  'mcp-session-id',
  'mcp-protocol-version',
  HEADER.retryAfter,
  HEADER.requestId,
].join(', ');

/** How long a browser may reuse a preflight (Chromium caps it at 2 hours). */
const MAX_AGE_SECONDS = '7200';

/** A CORS preflight (Fetch standard): OPTIONS naming the method the page means to send. */
export function isPreflight(req: IncomingMessage): boolean {
  return req.method === 'OPTIONS' && headerValue(req.headers, 'access-control-request-method') !== undefined;
}

/** 204 to the preflight of an admitted origin: what it may send, and for how long to remember it. */
export function answerPreflight(req: IncomingMessage, res: ServerResponse, origin: string): void {
  const requested = (headerValue(req.headers, 'access-control-request-headers') ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => MCP_PARAM_HEADER.test(name));
  res.writeHead(204, {
    'access-control-allow-origin': origin,
    'access-control-allow-methods': ALLOW_METHODS,
    'access-control-allow-headers': [...new Set([...ALLOW_HEADERS, ...requested])].join(', '),
    'access-control-max-age': MAX_AGE_SECONDS,
    vary: 'Origin, Access-Control-Request-Headers',
  });
  res.end();
}

/**
 * Makes whatever /mcp answers next (200, 401 with WWW-Authenticate, 405, 429, 500…) readable by
 * the admitted origin: set on the response before any status is chosen, so no answer misses it.
 */
export function allowOrigin(res: ServerResponse, origin: string): void {
  res.setHeader('access-control-allow-origin', origin);
  res.setHeader('access-control-expose-headers', EXPOSE_HEADERS);
  res.setHeader('vary', 'Origin');
}
