import ky from 'ky';
import { LIMITS } from '../config.ts';

export interface UpstreamRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string;
}

export type UpstreamOutcome =
  | { ok: true; status: number; contentType: string | null; body: Buffer }
  | { ok: false; error: 'upstream_error'; status: number; body: string }
  | { ok: false; error: 'upstream_unreachable' }
  | { ok: false; error: 'upstream_timeout' };

const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const utf8 = new TextDecoder('utf-8');

/**
 * Calls the upstream through ky, following redirects only within the app's origin (the
 * Authorization header never leaves it). The time-out covers the whole exchange, body included.
 */
export async function callUpstream(request: UpstreamRequest, timeoutMs: number): Promise<UpstreamOutcome> {
  const signal = AbortSignal.timeout(timeoutMs);
  const origin = request.url.origin;
  let { method, body } = request;
  let url = request.url;
  try {
    for (let hop = 0; ; hop += 1) {
      const response = await ky(url, {
        method,
        headers: request.headers,
        body,
        signal,
        timeout: false,
        retry: 0,
        throwHttpErrors: false,
        redirect: 'manual',
      });
      const location = response.headers.get('location');
      if (REDIRECT_STATUSES.has(response.status) && location) {
        const next = safeUrl(location, url);
        if (next && next.origin === origin && hop < MAX_REDIRECTS) {
          await response.body?.cancel();
          // 303 (and 301/302 after a non-GET, as browsers do) continue as a GET without body.
          if (
            response.status === 303 ||
            ((response.status === 301 || response.status === 302) && method !== 'GET' && method !== 'HEAD')
          ) {
            method = 'GET';
            body = undefined;
          }
          url = next;
          continue;
        }
      }
      const bytes = Buffer.from(await response.arrayBuffer());
      if (response.status >= 200 && response.status < 300) {
        return {
          ok: true,
          status: response.status,
          contentType: response.headers.get('content-type'),
          body: bytes,
        };
      }
      return { ok: false, error: 'upstream_error', status: response.status, body: excerpt(bytes) };
    }
  } catch {
    if (signal.aborted) return { ok: false, error: 'upstream_timeout' };
    return { ok: false, error: 'upstream_unreachable' };
  }
}

function safeUrl(location: string, base: URL): URL | null {
  try {
    return new URL(location, base);
  } catch {
    return null;
  }
}

/**
 * The first 64 KiB of a body as UTF-8. A character cut at the edge is dropped rather than turned
 * into U+FFFD, which would push the excerpt past 64 KiB: a streaming decode holds it back.
 */
export function excerpt(bytes: Buffer): string {
  if (bytes.length <= LIMITS.upstreamBodyExcerptBytes) return utf8.decode(bytes);
  return new TextDecoder('utf-8').decode(bytes.subarray(0, LIMITS.upstreamBodyExcerptBytes), { stream: true });
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
