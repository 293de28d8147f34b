/** What autocannon sends, and what a correct answer looks like: the upstream, the bare proxy, toolgate's three paths. */
import { EXPECTED_BODY, ITEM_ID, mcpToolCall, OPERATION_ID, upstreamOpenApi } from './fixture.ts';
import type { Toolgate } from './toolgate.ts';

const APP_ID = 'bench';
/** The same upstream as an oauth2 app, with a grant seeded through a real initiate → callback. */
const OAUTH_APP_ID = 'bench-oauth';
const OAUTH_USER = 'bench-user';
const HTTP_MS = 15_000;

export interface Target {
  label: string;
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /** Null when the answer is right, else what is wrong. */
  check(status: number, text: string): string | null;
  /** The process that does the proxying (CPU and RSS are sampled), if any. */
  pid?: number;
  /** Counters read just before and after the measured load (database statements, KMS calls). */
  counters?: () => Promise<Record<string, number>>;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export function checkItem(status: number, text: string): string | null {
  if (status !== 200) return `status ${status}: ${text.slice(0, 200)}`;
  try {
    return sameJson(JSON.parse(text), EXPECTED_BODY) ? null : `unexpected body ${text.slice(0, 200)}`;
  } catch {
    return `body is not JSON: ${text.slice(0, 200)}`;
  }
}

function checkEnvelope(status: number, text: string, toolId = `${APP_ID}:::${OPERATION_ID}`): string | null {
  if (status !== 200) return `status ${status}: ${text.slice(0, 300)}`;
  try {
    const body = JSON.parse(text) as { ok?: unknown; data?: unknown; meta?: { tool_id?: unknown } };
    if (body.ok !== true) return `ok is not true: ${text.slice(0, 300)}`;
    if (!sameJson(body.data, EXPECTED_BODY)) return `unexpected data: ${text.slice(0, 300)}`;
    if (body.meta?.tool_id !== toolId) return `unexpected meta: ${text.slice(0, 300)}`;
    return null;
  } catch {
    return `body is not JSON: ${text.slice(0, 300)}`;
  }
}

export async function verify(target: Target): Promise<void> {
  for (let i = 0; i < 3; i += 1) {
    const response = await fetch(target.url, {
      method: target.method,
      headers: target.headers,
      body: target.body,
      signal: AbortSignal.timeout(HTTP_MS),
    });
    const problem = target.check(response.status, await response.text());
    if (problem) throw new Error(`${target.label} does not answer as expected: ${problem}`);
  }
}

async function adminCall(
  toolgate: Toolgate,
  method: string,
  route: string,
  body: unknown,
): Promise<Record<string, unknown>> {
  const response = await fetch(`${toolgate.url}${route}`, {
    method,
    headers: { authorization: `Bearer ${toolgate.adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(HTTP_MS),
  });
  const text = await response.text();
  if (response.status !== 200)
    throw new Error(`${method} ${route}: ${response.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** A client, an API key (tools:execute) and the app (auth none) through the admin REST routes. */
export async function proxyTarget(toolgate: Toolgate, label: string, upstreamUrl: string): Promise<Target> {
  const client = await adminCall(toolgate, 'POST', '/admin/clients', { name: 'bench' });
  const clientId = String(client.clientId);
  const key = await adminCall(toolgate, 'POST', `/admin/clients/${encodeURIComponent(clientId)}/api-keys`, {
    name: 'bench',
    scopes: ['tools:execute', 'oauth:initiate'],
  });
  const app = await adminCall(toolgate, 'PUT', `/admin/apps/${APP_ID}`, {
    provider: 'bench.local',
    baseUrl: upstreamUrl,
    openapi: upstreamOpenApi(upstreamUrl),
    auth: { type: 'none' },
  });
  if (!Array.isArray(app.tools) || !app.tools.includes(OPERATION_ID))
    throw new Error(`app registration did not yield the tool ${OPERATION_ID}: ${JSON.stringify(app)}`);
  return {
    label,
    url: `${toolgate.url}/proxyV2`,
    method: 'POST',
    headers: {
      authorization: `Bearer ${String(key.apiKey)}`,
      'x-service-client-id': clientId,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ toolId: `${APP_ID}:::${OPERATION_ID}`, parameters: { itemId: ITEM_ID } }),
    check: (status, text) => checkEnvelope(status, text),
    pid: toolgate.pid,
    counters: () => toolgateCounters(toolgate),
  };
}

/** toolgate's own counters from /metrics: statements sent to the database, KMS calls. */
async function toolgateCounters(toolgate: Toolgate): Promise<Record<string, number>> {
  const response = await fetch(`${toolgate.url}/metrics`, { signal: AbortSignal.timeout(HTTP_MS) });
  const text = await response.text();
  const sum = (name: string) =>
    [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))].reduce(
      (n, m) => n + Number(m[1]),
      0,
    );
  return { 'db queries': sum('toolgate_db_queries_total'), 'KMS calls': sum('toolgate_kms_calls_total') };
}

/**
 * The same tool as an oauth2 app whose grant is warm and valid: the app's token endpoint is the
 * upstream's `POST /token`; a real `POST /initiateOAuth` then `GET /handleOAuthCallback` (what the
 * provider's redirect would do) stores a sealed grant valid for a day. Calls carry X-Service-User-Id.
 */
export async function oauthTarget(
  toolgate: Toolgate,
  label: string,
  upstreamUrl: string,
  base: Target,
): Promise<Target> {
  const clientId = base.headers['x-service-client-id'] as string;
  const redirect = 'http://127.0.0.1/bench-authorized';
  await adminCall(toolgate, 'POST', `/admin/clients/${encodeURIComponent(clientId)}/redirect-uris`, {
    uri: redirect,
  });
  const app = await adminCall(toolgate, 'PUT', `/admin/apps/${OAUTH_APP_ID}`, {
    provider: 'bench.local',
    baseUrl: upstreamUrl,
    openapi: upstreamOpenApi(upstreamUrl),
    auth: {
      type: 'oauth2',
      authorizationUrl: `${upstreamUrl}/authorize`,
      tokenUrl: `${upstreamUrl}/token`,
      clientId: 'bench-client',
      clientSecret: 'bench-secret',
      scopes: ['items:read'],
    },
  });
  if (!Array.isArray(app.tools) || !app.tools.includes(OPERATION_ID))
    throw new Error(`oauth2 app registration did not yield ${OPERATION_ID}: ${JSON.stringify(app)}`);
  const initiated = await fetch(`${toolgate.url}/initiateOAuth`, {
    method: 'POST',
    headers: base.headers,
    body: JSON.stringify({ appId: OAUTH_APP_ID, userId: OAUTH_USER, clientRedirectUri: redirect }),
    signal: AbortSignal.timeout(HTTP_MS),
  });
  const initiateText = await initiated.text();
  if (initiated.status !== 200) throw new Error(`initiateOAuth: ${initiated.status} ${initiateText}`);
  const { state } = JSON.parse(initiateText) as { state: string };
  const callback = await fetch(
    `${toolgate.url}/handleOAuthCallback?code=bench-code&state=${encodeURIComponent(state)}`,
    { redirect: 'manual', signal: AbortSignal.timeout(HTTP_MS) },
  );
  await callback.text();
  const location = callback.headers.get('location') ?? '';
  if (callback.status !== 302 || !location.startsWith(redirect) || location.includes('error='))
    throw new Error(`OAuth callback: ${callback.status} to ${location}`);
  const toolId = `${OAUTH_APP_ID}:::${OPERATION_ID}`;
  return {
    ...base,
    label,
    headers: { ...base.headers, 'x-service-user-id': OAUTH_USER },
    body: JSON.stringify({ toolId, parameters: { itemId: ITEM_ID } }),
    check: (status, text) => checkEnvelope(status, text, toolId),
  };
}

/**
 * The auth-none tool over MCP (2026-07-28, stateless): one JSON-RPC `tools/call` POST per call,
 * with the headers and `_meta` the official v2 client sends.
 */
export function mcpTarget(label: string, base: Target): Target {
  const call = mcpToolCall(`${APP_ID}__${OPERATION_ID}`);
  return {
    ...base,
    label,
    url: base.url.replace(/\/proxyV2$/, '/mcp'),
    headers: { ...base.headers, ...call.headers },
    body: call.body,
    check: checkMcp,
  };
}

function checkMcp(status: number, text: string): string | null {
  if (status !== 200) return `status ${status}: ${text.slice(0, 300)}`;
  try {
    const body = JSON.parse(text) as { result?: { isError?: boolean; structuredContent?: unknown } };
    if (!body.result || body.result.isError) return `not a tool result: ${text.slice(0, 300)}`;
    if (!text.includes(ITEM_ID)) return `the item is missing: ${text.slice(0, 300)}`;
    return null;
  } catch {
    return `body is not JSON: ${text.slice(0, 300)}`;
  }
}
