/**
 * A conversation with a remote MCP server (docs/reference.md "Apps from MCP servers"), through the
 * official MCP client SDK over Streamable HTTP, under the limits of every upstream: one time-out
 * for the whole exchange (`UPSTREAM_TIMEOUT_MS`), a cap on the bytes read (`MAX_UPSTREAM_BODY_BYTES`),
 * and connections on the undici agent HTTP upstreams use.
 *
 * The SDK throws its own errors for everything that goes wrong; which of the contract's failures
 * it was is read from what our fetch saw (the last HTTP answer, a refused connection, the limit
 * reached, the clock), never parsed out of an error message. Each conversation is its own client
 * and connection: servers hold nothing of ours between calls, so any toolgate server can call.
 */
import type { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { fetch as undiciFetch } from 'undici';
import { excerpt } from '../excerpt.ts';
import { err, ok, type Result } from '../result.ts';
import { failureCode } from './unreachable.ts';
import { dispatcher } from './upstream.ts';

/** Why a conversation ended without its answer; `kind` names the contract code it becomes. */
export type McpUpstreamFailure =
  /** The server answered HTTP `status` (a 401 carries its `WWW-Authenticate` as `challenge`). */
  | { kind: 'upstream_error'; status: number; body: string; challenge?: string }
  /** The server answered a JSON-RPC error (`body` is it, as JSON) over an HTTP 200. */
  | { kind: 'protocol_error'; code: number; body: string; message: string }
  /** What came back is not MCP (not JSON-RPC, an unsupported version…): `message` says what. */
  | { kind: 'not_mcp'; message: string }
  | { kind: 'upstream_too_large'; limit: number }
  | { kind: 'upstream_unreachable'; cause: string }
  | { kind: 'upstream_timeout' };

export interface McpUpstreamOptions {
  /** Headers sent with every request (the app's credential or the user's bearer token). */
  headers: Record<string, string>;
  timeoutMs: number;
  /** Bytes the whole conversation may read from the server. */
  maxBodyBytes: number;
}

const CLIENT_INFO = { name: 'toolgate', version: '0.1.0' };

/** The options each request of a conversation carries: its signal and a time-out the SDK never reaches. */
export interface McpRequestOptions {
  timeout: number;
  signal: AbortSignal;
}

/** What our fetch saw of the conversation, for telling its failures apart. */
class Watch {
  /** The most recent answer that was not 2xx, cleared by a later 2xx (a probe's 400 is not the failure). */
  refusal: { status: number; body: string; challenge?: string } | undefined;
  /** A failure our fetch decided (limit, time-out, connection), which outranks anything the SDK says. */
  failure: McpUpstreamFailure | undefined;
  bytes = 0;
}

/**
 * Runs `work` with a client connected to the MCP server at `url`; both protocol eras are spoken
 * (the SDK's `auto` negotiation: `server/discover`, else the 2025 `initialize` handshake).
 */
export async function withMcpServer<T>(
  url: string,
  options: McpUpstreamOptions,
  work: (client: Client, request: McpRequestOptions) => Promise<T>,
): Promise<Result<T, McpUpstreamFailure>> {
  const watch = new Watch();
  const controller = new AbortController();
  const timer = setTimeout(() => {
    watch.failure ??= { kind: 'upstream_timeout' };
    controller.abort();
  }, options.timeoutMs);
  // Loaded on first use: a server without MCP-server apps never loads the client SDK.
  const { Client, ProtocolError, StreamableHTTPClientTransport } = await import(
    '@modelcontextprotocol/client'
  );
  const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: 'auto' } });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: boundedFetch(watch, controller, options.maxBodyBytes),
    requestInit: { headers: options.headers },
  });
  // Our timer is the time-out: the SDK's own (60 s by default) must never answer first.
  const request = { timeout: options.timeoutMs + 60_000, signal: controller.signal };
  try {
    await client.connect(transport, request);
    return ok(await work(client, request));
  } catch (error) {
    return err(classify(error, watch, (e) => e instanceof ProtocolError));
  } finally {
    clearTimeout(timer);
    // A 2025-era server may keep a session for us: end it, without making the caller wait.
    void endSession(transport, client);
  }
}

async function endSession(transport: StreamableHTTPClientTransport, client: Client): Promise<void> {
  try {
    if (transport.sessionId) await transport.terminateSession();
  } catch {}
  await client.close().catch(() => {});
}

function classify(
  error: unknown,
  watch: Watch,
  isProtocolError: (error: unknown) => boolean,
): McpUpstreamFailure {
  if (watch.failure) return watch.failure;
  if (watch.refusal) return { kind: 'upstream_error', ...watch.refusal };
  if (isProtocolError(error)) {
    const { code, message, data } = error as { code: number; message: string; data?: unknown };
    const body = JSON.stringify({ code, message, data });
    return { kind: 'protocol_error', code, body, message };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { kind: 'not_mcp', message: message.slice(0, 300) };
}

/**
 * fetch for the SDK's transport: undici on our agent, under the conversation's signal, with the
 * bytes read counted across every answer. A non-2xx answer is read (its first 64 KiB) and kept
 * for the failure; the SDK gets the same bytes.
 */
function boundedFetch(watch: Watch, controller: AbortController, limit: number) {
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const signal = init?.signal ? AbortSignal.any([init.signal, controller.signal]) : controller.signal;
    let response: Awaited<ReturnType<typeof undiciFetch>>;
    try {
      response = await undiciFetch(
        input as string,
        {
          ...(init as object),
          signal,
          dispatcher,
          redirect: 'manual',
        } as Parameters<typeof undiciFetch>[1],
      );
    } catch (error) {
      if (!controller.signal.aborted && !init?.signal?.aborted) {
        watch.failure ??= { kind: 'upstream_unreachable', cause: failureCode(error) };
      }
      throw error;
    }
    const headers = new Headers(response.headers as unknown as Headers);
    if (response.status < 200 || response.status >= 300) {
      const bytes = await readCapped(response.body, 64 * 1024);
      const challenge = response.headers.get('www-authenticate');
      watch.refusal = {
        status: response.status,
        body: excerpt(bytes),
        ...(challenge !== null ? { challenge } : {}),
      };
      headers.delete('content-length');
      headers.delete('content-encoding');
      return new Response(new Uint8Array(bytes), { status: response.status, headers });
    }
    watch.refusal = undefined;
    const counted = (response.body as ReadableStream<Uint8Array> | null)?.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, stream) {
          watch.bytes += chunk.byteLength;
          if (watch.bytes > limit) {
            watch.failure ??= { kind: 'upstream_too_large', limit };
            controller.abort();
            stream.error(new Error('upstream answer too large'));
            return;
          }
          stream.enqueue(chunk);
        },
      }),
    );
    headers.delete('content-length');
    headers.delete('content-encoding');
    return new Response(response.status === 204 ? null : (counted ?? null), {
      status: response.status,
      headers,
    });
  };
}

/** At most `cap` bytes of a body; the rest is not read. */
async function readCapped(body: ReadableStream<Uint8Array> | null, cap: number): Promise<Buffer> {
  if (!body) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let size = 0;
  const reader = body.getReader();
  try {
    while (size < cap) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(Buffer.from(value));
      size += value.byteLength;
    }
  } catch {
    // A body cut short: what was read is what there is.
  } finally {
    reader.cancel().catch(() => {});
  }
  return Buffer.concat(chunks).subarray(0, cap);
}
