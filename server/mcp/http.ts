import type { IncomingMessage, ServerResponse } from 'node:http';
import { createMcpHandler, validateHostHeader } from '@modelcontextprotocol/server';
import { apiError } from '../../shared/errors.ts';
import { HEADER } from '../../shared/headers.ts';
import { ID_PATTERN, userIdSchema } from '../../shared/ids.ts';
import { BAD_USER_HEADER } from '../calls/checks.ts';
import { headerValue } from '../context.ts';
import type { AppDeps } from '../deps.ts';
import { badHeader } from '../errors.ts';
import { readJsonBody } from '../http/body.ts';
import { sendError, sendJson } from '../http/respond.ts';
import { bodyFailure } from '../http/rest.ts';
import type { RouteRequest } from '../http/route-table.ts';
import { lazyLogger } from '../logger.ts';
import { rememberInitialize } from './clients.ts';
import { MCP_CALL, type McpCall } from './context.ts';
import { answerDirectCall, DirectCallRecognizer } from './direct-call.ts';
import { MCP_PATH } from './path.ts';
import { requestStateCodecs, STATE_BINDING, type StateBinding } from './request-state.ts';
import { mcpServerFactory } from './server.ts';

export { MCP_PATH };

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', '[::1]', 'localhost']);

/** A JSON-RPC error answered before the MCP server is reached (no request id is known yet). */
function sendRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null });
}

/**
 * POST /mcp: the HTTP side of the MCP adapter, in front of the official SDK's stateless handler
 * (createMcpHandler: 2026-07-28, and 2025-era clients through its legacy fallback). In order:
 * DNS-rebinding defence (Host, Origin → 403) → body (415, 413, malformed JSON and batches →
 * JSON-RPC errors) → key and client (401 + WWW-Authenticate) → `apps` → a plain 2026-07-28
 * `tools/call` straight to the tool-call core (direct-call.ts), anything else to the SDK.
 */
export function createMcpRoute(deps: AppDeps, options: { direct?: boolean } = {}) {
  // `direct: false` sends every request to the SDK: the test that holds both paths to each other.
  const directCalls = options.direct === false ? undefined : new DirectCallRecognizer();
  const { config, logger } = deps;
  const handler = createMcpHandler(mcpServerFactory(deps, requestStateCodecs(deps)), {
    legacy: 'stateless',
    maxRequestBodySize: config.maxBodyBytes,
    onerror: (error) => logger.debug({ err: error }, 'mcp request refused'),
  });
  const publicHost = new URL(config.publicUrl).hostname;
  const allowedHosts = [publicHost];
  if (LOOPBACK_HOSTS.has(config.host)) allowedHosts.push('localhost', '127.0.0.1', '[::1]');
  const allowedOrigins = new Set(config.mcpAllowedOrigins);

  return async function handleMcp(
    req: IncomingMessage,
    res: ServerResponse,
    request: RouteRequest,
  ): Promise<void> {
    if (!validateHostHeader(headerValue(req.headers, 'host'), allowedHosts).ok) {
      req.resume();
      return sendRpcError(res, 403, -32000, 'The Host header names no host this server answers for.');
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !allowedOrigins.has(originOf(origin))) {
      req.resume();
      return sendRpcError(res, 403, -32000, 'This Origin may not call /mcp (MCP_ALLOWED_ORIGINS).');
    }

    const read = await readJsonBody(req, config.maxBodyBytes);
    if (!read.ok) {
      if (read.error === 'payload_too_large' || read.error === 'unsupported_media_type') {
        const headers: Record<string, string> =
          read.error === 'payload_too_large' ? { connection: 'close' } : {};
        return sendError(res, bodyFailure(read.error, config.maxBodyBytes), headers);
      }
      return sendRpcError(
        res,
        400,
        -32700,
        'Parse error: the body is not valid JSON (or nests deeper than 128).',
      );
    }
    const message = read.value;
    if (Array.isArray(message)) {
      return sendRpcError(res, 400, -32600, 'Invalid Request: JSON-RPC batches are not supported.');
    }
    if (message === undefined || message === null || typeof message !== 'object') {
      return sendRpcError(res, 400, -32600, 'Invalid Request: the body must be one JSON-RPC message.');
    }

    const authenticated = await deps.keys.authenticate(headerValue(req.headers, HEADER.authorization), {
      address: req.socket.remoteAddress,
    });
    const unauthorized = { 'www-authenticate': 'Bearer' };
    if (!authenticated.ok) {
      return sendError(
        res,
        apiError('invalid_api_key', 'The API key is missing, malformed, unknown or revoked.'),
        unauthorized,
      );
    }
    const principal = authenticated.value;
    const clientId = headerValue(req.headers, HEADER.clientId);
    if (!clientId || clientId !== principal.clientId) {
      return sendError(
        res,
        apiError(
          'invalid_client',
          'X-Service-Client-Id is missing, unknown, or not the client this key was issued to.',
        ),
        unauthorized,
      );
    }

    const { requestId, startedAt } = request;
    const apps = request.hasQuery ? appsFilter(request.url.searchParams.getAll('apps')) : undefined;
    if (apps === null) {
      const text = 'apps must be a comma-separated list of app ids.';
      return sendError(res, apiError('invalid_request', text, { issues: [{ path: '', message: text }] }));
    }
    const userId = headerValue(req.headers, HEADER.userId);
    // Checked before anything is stored (the 2025-era capability memory keys on it).
    if (userId !== undefined && !userIdSchema.safeParse(userId).success) {
      return sendError(res, badHeader(BAD_USER_HEADER));
    }
    const rpc = message as { method?: unknown; params?: { capabilities?: unknown; arguments?: unknown } };
    const keyId = principal.keyId;
    if (rpc.method === 'initialize' && keyId) {
      await rememberInitialize(
        deps.db.prisma,
        keyId,
        userId,
        rpc.params?.capabilities,
        new Date(deps.clock.now()),
      );
    }
    const args = rpc.method === 'tools/call' ? rpc.params?.arguments : undefined;
    const call: McpCall = {
      caller: { principal: principal, clientId },
      userId,
      apps,
      protoArguments: args !== null && typeof args === 'object' && Object.hasOwn(args, '__proto__'),
      startedAt,
      log: lazyLogger(logger, requestId),
    };
    const direct = directCalls?.recognize(message, req.headers);
    if (direct) {
      const answer = await answerDirectCall(deps, call, direct);
      if (answer !== undefined) {
        // As the SDK answers it (a test holds the two paths to each other).
        res.writeHead(200, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(answer),
        });
        res.end(answer);
        return;
      }
    }
    const binding: StateBinding = { keyId: keyId ?? '', clientId, userId };

    const abort = new AbortController();
    res.once('close', () => abort.abort());
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string') headers.set(name, value);
    }
    const webRequest = new Request(new URL(`${MCP_PATH}${request.url.search}`, config.publicUrl), {
      method: 'POST',
      headers,
      signal: abort.signal,
    });
    const response = await handler.fetch(webRequest, {
      parsedBody: message,
      authInfo: {
        token: keyId ?? '',
        clientId,
        scopes: [...principal.scopes],
        extra: { [MCP_CALL]: call, [STATE_BINDING]: binding },
      },
    });
    await pipe(response, res);
  };
}

/** `apps=a,b` (repeatable): the ids, or null when one is malformed; undefined when absent. */
function appsFilter(values: string[]): ReadonlySet<string> | undefined | null {
  if (values.length === 0) return undefined;
  const ids = values.flatMap((value) => value.split(',')).map((id) => id.trim());
  if (ids.some((id) => !ID_PATTERN.test(id))) return null;
  return new Set(ids);
}

function originOf(value: string): string {
  try {
    const origin = new URL(value).origin;
    return origin === 'null' ? '' : origin;
  } catch {
    return '';
  }
}

/** Writes a web Response (JSON, or the SSE stream of a legacy exchange) to the Node response. */
async function pipe(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  if (!response.body) {
    res.writeHead(response.status, headers);
    res.end();
    return;
  }
  // A JSON answer is one piece: read it whole and write it once (iterating the web stream chunk by
  // chunk cost ~0.1 ms per call in the bench profile). Only an event stream is passed on as it comes.
  if (!headers['content-type']?.startsWith('text/event-stream')) {
    const body = Buffer.from(await response.arrayBuffer());
    headers['content-length'] = String(body.length);
    res.writeHead(response.status, headers);
    res.end(body);
    return;
  }
  res.writeHead(response.status, headers);
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve));
    }
  } catch {
    // The client went away mid-stream: nothing left to answer.
  }
  res.end();
}
