import type { IncomingMessage, ServerResponse } from 'node:http';
import { createMcpHandler, validateHostHeader } from '@modelcontextprotocol/server';
import { HEADER } from '../../shared/headers.ts';
import { ID_PATTERN, userIdSchema } from '../../shared/ids.ts';
import { authenticateAgent, type Caller } from '../auth/agent.ts';
import { BAD_USER_HEADER } from '../calls/checks.ts';
import type { Config } from '../config.ts';
import { headerValue } from '../context.ts';
import type { AppDeps } from '../deps.ts';
import { badHeader, requestProblem } from '../errors.ts';
import { discardBody, readJsonBody } from '../http/body.ts';
import { bodyFailure } from '../http/problem.ts';
import { repeatedHeader } from '../http/repeated-headers.ts';
import { sendError, sendJson, sendMethodNotAllowed } from '../http/respond.ts';
import type { RouteHandler, RouteRequest } from '../http/route-table.ts';
import { lazyLogger, requestLogFields } from '../logger.ts';
import { resourceMetadataUrl } from '../signin/paths.ts';
import { rememberInitialize } from './clients.ts';
import { MCP_CALL, MCP_MODES, type McpCall, type McpMode } from './context.ts';
import { allowOrigin, answerPreflight, isPreflight } from './cors.ts';
import { answerDirectCall, DirectCallRecognizer } from './direct-call.ts';
import { MCP_PATH } from './path.ts';
import { requestStateCodecs, STATE_BINDING, type StateBinding } from './request-state.ts';
import { CALL_TOOL } from './search-mode.ts';
import { mcpServerFactory } from './server.ts';
import { toWebRequest, writeWebResponse } from './web-bridge.ts';

export { MCP_PATH };

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', '[::1]', 'localhost']);
/** A 401 of /mcp tells the client how to authenticate. */
const UNAUTHORIZED: Readonly<Record<string, string>> = Object.freeze({ 'www-authenticate': 'Bearer' });

/** What the guard decided: refused (403 answered), or admitted, with the browser Origin it admitted if one was sent. */
type Admission = { admitted: false } | { admitted: true; origin: string | undefined };

/** One JSON-RPC message as the body carries it (a non-null, non-array object). */
type RpcMessage = { method?: unknown; params?: { capabilities?: unknown; arguments?: unknown } };
type McpHandler = ReturnType<typeof createMcpHandler>;

/** A JSON-RPC error answered before the MCP server is reached (no request id is known yet). */
function sendRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null });
}

/**
 * /mcp: the HTTP side of the MCP adapter, in front of the official SDK's stateless handler
 * (createMcpHandler: 2026-07-28, and 2025-era clients through its legacy fallback). Its steps, in
 * order; each answers the request itself when it refuses it:
 * 1. `guard`: the DNS-rebinding defence (Host, Origin → 403); an Origin it admits gets CORS
 *    (cors.ts): its preflight is answered, and every answer after this carries Allow-Origin;
 *    then any method but POST answers 405;
 * 2. `readMessage`: the body (415, 413; malformed JSON and batches → JSON-RPC errors);
 * 3. `signIn`: key and client (401 + WWW-Authenticate), auth/agent.ts as on every surface;
 * 4. `callOptions`: the `apps` filter, the `mode` (catalog or search pair) and X-Service-User-Id,
 *    into the McpCall the server reads;
 * 5. `answerDirectly`: a plain 2026-07-28 `tools/call` straight to the tool-call core (direct-call.ts);
 * 6. `answerWithSdk`: anything else, through the SDK (web-bridge.ts).
 */
export function createMcpRoute(deps: AppDeps, options: { direct?: boolean } = {}): RouteHandler {
  // `direct: false` sends every request to the SDK: the test that holds both paths to each other.
  const directCalls = options.direct === false ? undefined : new DirectCallRecognizer();
  const { config, logger } = deps;
  const handler = createMcpHandler(mcpServerFactory(deps, requestStateCodecs(deps)), {
    legacy: 'stateless',
    maxRequestBodySize: config.maxBodyBytes,
    onerror: (error) => logger.debug({ err: error }, 'mcp request refused'),
  });
  const guard = hostAndOriginGuard(config);
  // With sign-in on, a 401 names the protected-resource metadata (RFC 9728 §5.1), where an MCP
  // client finds this server's authorization server and signs its user in.
  const unauthorized = deps.signin
    ? { 'www-authenticate': `Bearer resource_metadata="${resourceMetadataUrl(config.publicUrl)}"` }
    : UNAUTHORIZED;

  return async function handleMcp(req, res, request): Promise<void> {
    const admission = guard(req, res);
    if (!admission.admitted) return;
    if (admission.origin !== undefined) {
      if (isPreflight(req)) return answerPreflight(req, res, admission.origin);
      allowOrigin(res, admission.origin);
    }
    if (req.method !== 'POST') {
      discardBody(req);
      return sendMethodNotAllowed(res, req.method ?? 'GET', ['POST']);
    }
    const message = await readMessage(req, res, config.maxBodyBytes);
    if (!message) return;
    const caller = await signIn(deps, req, res, unauthorized);
    if (!caller) return;
    const call = await callOptions(deps, req, res, request, caller, message);
    if (!call) return;
    if (directCalls && (await answerDirectly(deps, directCalls, call, message, req, res))) return;
    await answerWithSdk(handler, config, req, res, request, message, call);
  };
}

/**
 * Step 1, the DNS-rebinding defence (contract §9): a Host this server does not answer for, or a
 * browser Origin that is neither PUBLIC_URL's, nor in MCP_ALLOWED_ORIGINS, nor — on a server that
 * listens on loopback — an http loopback origin on any port, gets 403; otherwise the request may
 * go on. A loopback server is reached only from its own machine, where a local page or tool on
 * another port (the MCP Inspector, a dev UI) is the normal caller; a rebinding attack's page has a
 * foreign origin, which stays refused. The one rule for both this 403 and CORS (cors.ts): an
 * Origin is either refused here or admitted, and then answered with its CORS headers.
 */
function hostAndOriginGuard(config: Config): (req: IncomingMessage, res: ServerResponse) => Admission {
  const publicUrl = new URL(config.publicUrl);
  const onLoopback = LOOPBACK_HOSTS.has(config.host);
  const allowedHosts = [publicUrl.hostname];
  if (onLoopback) allowedHosts.push('localhost', '127.0.0.1', '[::1]');
  const allowedOrigins = new Set([publicUrl.origin, ...config.mcpAllowedOrigins]);
  const originAllowed = (value: string): boolean => {
    const origin = parseOrigin(value);
    if (!origin) return false;
    if (allowedOrigins.has(origin.origin)) return true;
    return onLoopback && origin.protocol === 'http:' && LOOPBACK_HOSTS.has(origin.hostname);
  };
  return (req, res) => {
    const origin = req.headers.origin;
    if (!validateHostHeader(headerValue(req.headers, 'host'), allowedHosts).ok) {
      discardBody(req);
      // An admitted page may read why (say, a proxy's Host this server was not told of).
      if (origin !== undefined && originAllowed(origin)) allowOrigin(res, origin);
      sendRpcError(res, 403, -32000, 'The Host header names no host this server answers for.');
      return { admitted: false };
    }
    if (origin !== undefined && !originAllowed(origin)) {
      discardBody(req);
      sendRpcError(res, 403, -32000, 'This Origin may not call /mcp (MCP_ALLOWED_ORIGINS).');
      return { admitted: false };
    }
    return { admitted: true, origin };
  };
}

/** Step 2: the body, one JSON-RPC message (an object); undefined when refused. */
async function readMessage(
  req: IncomingMessage,
  res: ServerResponse,
  limit: number,
): Promise<RpcMessage | undefined> {
  const read = await readJsonBody(req, limit);
  if (!read.ok) {
    // The transport's refusals keep their contract bodies; a body that is no JSON is JSON-RPC's.
    if (read.error === 'payload_too_large' || read.error === 'unsupported_media_type') {
      sendError(res, bodyFailure(read.error, limit));
      return undefined;
    }
    sendRpcError(res, 400, -32700, 'Parse error: the body is not valid JSON (or nests deeper than 128).');
    return undefined;
  }
  const message = read.value;
  if (Array.isArray(message)) {
    sendRpcError(res, 400, -32600, 'Invalid Request: JSON-RPC batches are not supported.');
    return undefined;
  }
  if (message === undefined || message === null || typeof message !== 'object') {
    sendRpcError(res, 400, -32600, 'Invalid Request: the body must be one JSON-RPC message.');
    return undefined;
  }
  return message as RpcMessage;
}

/** Step 3: the key and its client, as every surface signs an agent in; undefined when refused (401). */
async function signIn(
  deps: AppDeps,
  req: IncomingMessage,
  res: ServerResponse,
  unauthorized: Readonly<Record<string, string>>,
): Promise<Caller | undefined> {
  const repeated = repeatedHeader(req);
  if (repeated) {
    sendError(res, repeated);
    return undefined;
  }
  const caller = await authenticateAgent(
    deps.keys,
    req.headers,
    req.socket.remoteAddress,
    requestLogFields(res),
    deps.signin?.accessTokens,
  );
  if (caller.ok) return caller.value;
  sendError(res, caller.error, unauthorized);
  return undefined;
}

/**
 * Step 4: what the request asks besides its message: the `apps` filter and the user. A 2025-era
 * `initialize` is remembered here (its client capabilities), keyed by key and user.
 */
async function callOptions(
  deps: AppDeps,
  req: IncomingMessage,
  res: ServerResponse,
  request: RouteRequest,
  caller: Caller,
  rpc: RpcMessage,
): Promise<McpCall | undefined> {
  const apps = request.hasQuery ? appsFilter(request.url.searchParams.getAll('apps')) : undefined;
  if (apps === null) {
    const text = 'apps must be a comma-separated list of app ids.';
    sendError(res, requestProblem(text));
    return undefined;
  }
  const mode = request.hasQuery ? (request.url.searchParams.get('mode') ?? 'auto') : 'auto';
  if (!(MCP_MODES as readonly string[]).includes(mode)) {
    const text = 'mode must be auto, all or search.';
    sendError(res, requestProblem(text));
    return undefined;
  }
  // A signed-in caller's user is the person (oidc:<sub>); X-Service-User-Id is not read then.
  const userId = caller.userId ?? headerValue(req.headers, HEADER.userId);
  // Checked before anything is stored (the 2025-era capability memory keys on it).
  if (caller.userId === undefined && userId !== undefined && !userIdSchema.safeParse(userId).success) {
    sendError(res, badHeader(BAD_USER_HEADER));
    return undefined;
  }
  const keyId = caller.principal.keyId;
  if (rpc.method === 'initialize' && keyId) {
    await rememberInitialize(
      deps.db.prisma,
      keyId,
      userId,
      rpc.params?.capabilities,
      new Date(deps.clock.now()),
    );
  }
  const rpcArgs = rpc.method === 'tools/call' ? rpc.params?.arguments : undefined;
  // call_tool (search mode) carries the tool's arguments one level down.
  const args =
    (rpc.params as { name?: unknown } | undefined)?.name === CALL_TOOL &&
    rpcArgs !== null &&
    typeof rpcArgs === 'object'
      ? (rpcArgs as { arguments?: unknown }).arguments
      : rpcArgs;
  return {
    caller,
    userId,
    apps,
    mode: mode as McpMode,
    protoArguments: args !== null && typeof args === 'object' && Object.hasOwn(args, '__proto__'),
    startedAt: request.startedAt,
    requestId: request.requestId,
    log: lazyLogger(deps.logger, request.requestId),
    logFields: requestLogFields(res),
  };
}

/** Step 5, the fast path: true when the direct path answered (a plain modern `tools/call`). */
async function answerDirectly(
  deps: AppDeps,
  directCalls: DirectCallRecognizer,
  call: McpCall,
  message: RpcMessage,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<boolean> {
  const direct = directCalls.recognize(message, req.headers);
  if (!direct) return false;
  const answer = await answerDirectCall(deps, call, direct);
  if (answer === undefined) return false;
  // As the SDK answers it (a test holds the two paths to each other).
  res.writeHead(200, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(answer),
  });
  res.end(answer);
  return true;
}

/** Step 6: the SDK's handler, given the parsed message and the McpCall (with its request-state binding). */
async function answerWithSdk(
  handler: McpHandler,
  config: Config,
  req: IncomingMessage,
  res: ServerResponse,
  request: RouteRequest,
  message: RpcMessage,
  call: McpCall,
): Promise<void> {
  const { principal, clientId } = call.caller;
  const keyId = principal.keyId;
  const binding: StateBinding = { keyId: keyId ?? '', clientId, userId: call.userId };
  const webRequest = toWebRequest(req, res, new URL(`${MCP_PATH}${request.url.search}`, config.publicUrl));
  const response = await handler.fetch(webRequest, {
    parsedBody: message,
    authInfo: {
      token: keyId ?? '',
      clientId,
      scopes: [...principal.scopes],
      extra: { [MCP_CALL]: call, [STATE_BINDING]: binding },
    },
  });
  await writeWebResponse(response, res);
}

/** `apps=a,b` (repeatable): the ids, or null when one is malformed; undefined when absent. */
function appsFilter(values: string[]): ReadonlySet<string> | undefined | null {
  if (values.length === 0) return undefined;
  const ids = values.flatMap((value) => value.split(',')).map((id) => id.trim());
  if (ids.some((id) => !ID_PATTERN.test(id))) return null;
  return new Set(ids);
}

function parseOrigin(value: string): URL | undefined {
  try {
    const url = new URL(value);
    return url.origin === 'null' ? undefined : url;
  } catch {
    return undefined;
  }
}
