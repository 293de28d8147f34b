import { EventEmitter } from 'node:events';
import type { Readable } from 'node:stream';
import { type Dispatcher, getGlobalDispatcher } from 'undici';
import type { UpstreamRequest } from '../catalog/request.ts';
import { LIMITS } from '../config.ts';
import { excerpt } from '../excerpt.ts';
import { readUpTo } from '../read-stream.ts';
import { err, ok, type Result } from '../result.ts';

/** A 2xx answer of the upstream, its body read whole. */
export interface UpstreamAnswer {
  status: number;
  contentType: string | null;
  body: Buffer;
}

/** Why there is no 2xx answer; `kind` is the contract code it becomes. */
export type UpstreamFailure =
  | { kind: 'upstream_error'; status: number; body: string }
  | { kind: 'upstream_too_large'; limit: number }
  /** `cause`: ECONNREFUSED, ENOTFOUND, … for the log (the answer's body stays the contract's). */
  | { kind: 'upstream_unreachable'; cause: string }
  | { kind: 'upstream_timeout' };

export type UpstreamOutcome = Result<UpstreamAnswer, UpstreamFailure>;

const MAX_REDIRECTS = 5;
/** Some APIs (GitHub's among them) refuse requests without a User-Agent. */
const USER_AGENT = 'toolgate/0.1';
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * Calls the upstream with undici (the HTTP engine under Node's fetch, without fetch's per-call
 * Request/Headers/stream machinery, which profiling showed to be a third of our CPU per call).
 * Redirects are followed only within the app's origin, so the Authorization header never leaves
 * it. The time-out covers the whole exchange, body included.
 */
export async function callUpstream(
  request: UpstreamRequest,
  timeoutMs: number,
  maxBodyBytes: number,
): Promise<UpstreamOutcome> {
  // undici takes an EventEmitter as its abort signal: an AbortController per call cost ~4 µs of
  // CPU in the bench profile, an emitter a tenth of that.
  const abort = new EventEmitter();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abort.emit('abort');
  }, timeoutMs);
  const origin = request.url.origin;
  let { method, body } = request;
  let headers = request.headers;
  let url = request.url;
  try {
    for (let hop = 0; ; hop += 1) {
      // The dispatcher itself, not undici's request(url, …) wrapper, which copies the options anew.
      const response = await getGlobalDispatcher().request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: method as Dispatcher.HttpMethod,
        headers: { 'user-agent': USER_AGENT, ...headers },
        body,
        signal: abort,
        // The abort timer above is the one time-out; undici's own would answer 502 instead of 504.
        headersTimeout: 0,
        bodyTimeout: 0,
      });
      const status = response.statusCode;
      const location = single(response.headers.location);
      if (REDIRECT_STATUSES.has(status) && location) {
        const next = safeUrl(location, url);
        if (next && next.origin === origin && hop < MAX_REDIRECTS) {
          await response.body.dump();
          // 303 (and 301/302 after a non-GET, as browsers do) continue as a GET without body.
          if (
            status === 303 ||
            ((status === 301 || status === 302) && method !== 'GET' && method !== 'HEAD')
          ) {
            method = 'GET';
            body = undefined;
            headers = withoutBodyHeaders(headers);
          }
          url = next;
          continue;
        }
      }
      if (status >= 200 && status < 300) {
        const read = await readAtMost(response.body, maxBodyBytes, declaredLength(response.headers));
        if (read === null) return err({ kind: 'upstream_too_large', limit: maxBodyBytes });
        return ok({ status, contentType: single(response.headers['content-type']) ?? null, body: read });
      }
      // Only the first 64 KiB of an error body is ever shown: stop reading there.
      return err({ kind: 'upstream_error', status, body: excerpt(await readPrefix(response.body)) });
    }
  } catch (error) {
    if (timedOut) return err({ kind: 'upstream_timeout' });
    return err({ kind: 'upstream_unreachable', cause: causeOf(error) });
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A success body of at most `limit` bytes, or null when it is longer: then reading stops at once
 * and the stream is destroyed (the connection closed), so an endless body costs no more memory
 * than the limit. A declared Content-Length over the limit is refused before reading.
 */
async function readAtMost(body: Readable, limit: number, declared?: number): Promise<Buffer | null> {
  if (declared !== undefined && declared > limit) {
    // Destroying a body nobody reads emits an abort error: it is the expected end here.
    body.on('error', () => {});
    body.destroy();
    return null;
  }
  const read = await readUpTo(body, limit);
  if (!read.over) return read.bytes;
  body.destroy();
  return null;
}

/** The first LIMITS.upstreamBodyExcerptBytes (+ 1, so a longer body is known as such), then stop. */
async function readPrefix(body: Readable): Promise<Buffer> {
  const read = await readUpTo(body, LIMITS.upstreamBodyExcerptBytes);
  if (read.over) body.destroy();
  return read.bytes;
}

function declaredLength(headers: Record<string, string | string[] | undefined>): number | undefined {
  const value = single(headers['content-length']);
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The request's headers without those that described the body it no longer has. */
function withoutBodyHeaders(headers: UpstreamRequest['headers']): UpstreamRequest['headers'] {
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => !/^content-(type|length|encoding)$/i.test(name)),
  ) as UpstreamRequest['headers'];
}

/** The system or TLS error code behind a failed connection (undici nests it as `cause`). */
function causeOf(error: unknown): string {
  type Failure = { code?: unknown; cause?: unknown; name?: unknown } | undefined;
  let e = error as Failure;
  for (let depth = 0; e && depth < 4; depth++, e = e.cause as Failure) {
    if (typeof e.code === 'string' && !e.code.startsWith('UND_ERR_')) return e.code;
  }
  const { code, name } = (error ?? {}) as { code?: unknown; name?: unknown };
  return typeof code === 'string' ? code : typeof name === 'string' ? name : 'unknown';
}

function safeUrl(location: string, base: URL): URL | null {
  try {
    return new URL(location, base);
  } catch {
    return null;
  }
}

/** `data` of the success envelope: JSON, text, base64 object, or null when empty. */
export function toData(contentType: string | null, body: Buffer): unknown {
  if (body.length === 0) return null;
  const mediaType = contentType?.split(';', 1)[0]?.trim().toLowerCase() ?? '';
  if (mediaType === 'application/json' || mediaType.endsWith('+json')) {
    try {
      return JSON.parse(body.toString('utf8'));
    } catch {
      return body.toString('utf8');
    }
  }
  if (mediaType.startsWith('text/')) return body.toString('utf8');
  return { content_type: contentType ?? 'application/octet-stream', base64: body.toString('base64') };
}
