import type { IncomingHttpHeaders } from 'node:http';
import { classifyInboundRequest, SERVER_INFO_META_KEY } from '@modelcontextprotocol/server';
import { LRUCache } from 'lru-cache';
import { headerValue } from '../context.ts';
import type { AppDeps } from '../deps.ts';
import { findMcpTool } from './catalog.ts';
import type { McpCall } from './context.ts';
import { errorResult } from './results.ts';
import { runMcpCall, SERVER_INFO } from './server.ts';

/**
 * The common MCP call, answered without the SDK's per-request machinery: a 2026-07-28 `tools/call`
 * that names a tool and its arguments and nothing else. The SDK builds a web Request, a Server,
 * a transport and a web Response for every request, and closes them again; that was three
 * quarters of an MCP call's CPU in the bench profile. Every other request, and every case below
 * that is not plainly this one, goes to the SDK, which stays the one judge of the protocol: the
 * era and the `_meta` envelope are checked with the SDK's own classifier, and a test holds the
 * answers of both paths to each other byte for byte.
 */

const REVISION = '2026-07-28';
const META_KEYS = new Set([
  'io.modelcontextprotocol/protocolVersion',
  'io.modelcontextprotocol/clientInfo',
  'io.modelcontextprotocol/clientCapabilities',
]);
/** What the SDK adds to every 2026-07-28 result of this server. */
const RESULT_META = { [SERVER_INFO_META_KEY]: SERVER_INFO };
const RESULT_META_JSON = JSON.stringify(RESULT_META);

export interface DirectCall {
  id: string | number;
  name: string;
  arguments: Record<string, unknown>;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

const onlyKeys = (value: Record<string, unknown>, allowed: (key: string) => boolean) =>
  Object.keys(value).every(allowed);

/** RFC 9110 optional whitespace around a field value, stripped as the SDK strips it. */
const ows = (value: string | undefined) => value?.replace(/^[ \t]+|[ \t]+$/g, '');

/** `_meta` envelopes longer than this are judged afresh each time instead of remembered. */
const MAX_REMEMBERED_ENVELOPE = 2_048;

/**
 * Tells which messages take the direct path. The SDK's classifier (zod over the whole message)
 * was a third of the direct path's own CPU; under the checks below its verdict depends on the
 * `_meta` envelope alone, and a client sends the same envelope on every call, so verdicts are
 * remembered per envelope text (a few hundred, least recently used first out).
 */
export class DirectCallRecognizer {
  readonly #verdicts = new LRUCache<string, boolean>({ max: 256 });

  /**
   * The call, when the SDK would serve this message as a plain modern `tools/call` (same era,
   * valid envelope, the standard headers present and agreeing with the body) and it asks for
   * nothing beyond a tool and its arguments: no requestState or input responses, no task, no extra
   * `_meta` (a progress token, a log level). Otherwise undefined, and the SDK answers.
   */
  recognize(message: unknown, headers: IncomingHttpHeaders): DirectCall | undefined {
    if (!isPlainObject(message) || message.method !== 'tools/call' || message.jsonrpc !== '2.0')
      return undefined;
    if (
      !onlyKeys(message, (key) => key === 'jsonrpc' || key === 'id' || key === 'method' || key === 'params')
    )
      return undefined;
    const { id, params } = message;
    // A JSON-RPC id as the SDK takes it: a string or an integer.
    if ((typeof id !== 'string' && !Number.isInteger(id)) || !isPlainObject(params)) return undefined;
    if (!onlyKeys(params, (key) => key === 'name' || key === 'arguments' || key === '_meta'))
      return undefined;
    const { name, arguments: args, _meta: meta } = params;
    if (typeof name !== 'string' || !isPlainObject(meta) || !onlyKeys(meta, (key) => META_KEYS.has(key)))
      return undefined;
    // A parser drops an own `__proto__`, and the contract reports it: the SDK path does both.
    if (args !== undefined && (!isPlainObject(args) || Object.hasOwn(args, '__proto__'))) return undefined;

    const protocolVersionHeader = headerValue(headers, 'mcp-protocol-version');
    const mcpMethodHeader = headerValue(headers, 'mcp-method');
    const mcpNameHeader = headerValue(headers, 'mcp-name');
    // The SDK requires all three on a modern request; the name as sent, not Base64-wrapped.
    if (ows(protocolVersionHeader) !== REVISION || ows(mcpMethodHeader) !== 'tools/call') return undefined;
    if (ows(mcpNameHeader) !== name || name.startsWith('=?')) return undefined;

    const judge = () => {
      const route = classifyInboundRequest({
        httpMethod: 'POST',
        protocolVersionHeader,
        mcpMethodHeader,
        mcpNameHeader,
        body: message,
      });
      return route.kind === 'modern' && route.classification.revision === REVISION;
    };
    const envelope = JSON.stringify(meta);
    let valid = envelope.length <= MAX_REMEMBERED_ENVELOPE ? this.#verdicts.get(envelope) : undefined;
    if (valid === undefined) {
      valid = judge();
      if (envelope.length <= MAX_REMEMBERED_ENVELOPE) this.#verdicts.set(envelope, valid);
    }
    return valid
      ? { id: id as string | number, name, arguments: (args ?? {}) as Record<string, unknown> }
      : undefined;
  }
}

/**
 * Runs the call through the tool-call core and answers the JSON-RPC response as the SDK writes it,
 * or undefined when the SDK must answer: an unknown tool (its protocol error), or a call that
 * needs the user's authorization (the elicitation round, which needs the SDK's request context;
 * the outcome is handed over in `call.settled`, so the call is not run twice).
 */
export async function answerDirectCall(
  deps: AppDeps,
  call: McpCall,
  direct: DirectCall,
): Promise<string | undefined> {
  const entry = await findMcpTool(deps.apps, call.caller.principal, call.apps, direct.name);
  if (!entry) return undefined;
  const outcome = await runMcpCall(deps, call, entry.toolId, direct.arguments);
  if (
    !outcome.ok &&
    (outcome.error.body.error === 'auth_required' || outcome.error.body.error === 'tool_not_found')
  ) {
    call.settled = outcome;
    return undefined;
  }
  if (outcome.ok) {
    // What JSON.stringify writes for successResult(envelope) with the fields below, byte for byte,
    // with the envelope serialized once: it is both the text block and the structured content.
    const text = JSON.stringify(outcome.value.body);
    return `{"result":{"content":[{"type":"text","text":${JSON.stringify(text)}}],"structuredContent":${text},"resultType":"complete","_meta":${RESULT_META_JSON}},"jsonrpc":"2.0","id":${JSON.stringify(direct.id)}}`;
  }
  return JSON.stringify({
    result: { ...errorResult(outcome.error.body), resultType: 'complete', _meta: RESULT_META },
    jsonrpc: '2.0',
    id: direct.id,
  });
}
