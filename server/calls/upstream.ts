import { Agent, type Dispatcher } from 'undici';
import { essence } from '../catalog/media.ts';
import type { UpstreamRequest } from '../catalog/request.ts';
import { LIMITS } from '../config.ts';
import { excerpt } from '../excerpt.ts';
import { err, ok, type Result } from '../result.ts';
import { failureCode } from './unreachable.ts';

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
  /** `cause`: the failure's code (ECONNREFUSED, ERR_SSL_…) for the log; the answer gets its kind. */
  | { kind: 'upstream_unreachable'; cause: string }
  | { kind: 'upstream_timeout' };

export type UpstreamOutcome = Result<UpstreamAnswer, UpstreamFailure>;

const MAX_REDIRECTS = 5;
/** Some APIs (GitHub's among them) refuse requests without a User-Agent. */
const USER_AGENT = 'toolgate/0.1';
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * Upstream connections, from the undici this package pins. Not undici's global dispatcher: the
 * first global `fetch()` in the process installs Node's own bundled undici there, so which undici
 * carried the calls (and its cost) depended on the Node line and on what ran first (issue 14).
 */
export const dispatcher = new Agent();

/**
 * Calls the upstream with undici's dispatcher and a handler of our own (no fetch, no promise
 * `request()` with its Readable body and async-resource bookkeeping: profiling showed each as a
 * large share of our CPU per call). Redirects are followed only within the app's origin and under
 * its base URL's path (`withinBase`), so the credential never reaches anything else. The time-out
 * covers the whole exchange, body included.
 */
export async function callUpstream(
  request: UpstreamRequest,
  baseUrl: string,
  timeoutMs: number,
  maxBodyBytes: number,
): Promise<UpstreamOutcome> {
  const origin = request.url.origin;
  let base: URL | undefined;
  let { method, body } = request;
  let headers = request.headers;
  let url = request.url;
  let current: Exchange | undefined;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    current?.cancel(TIMED_OUT);
  }, timeoutMs);
  try {
    for (let hop = 0; ; hop += 1) {
      const followable = (location: string): boolean => {
        const next = safeUrl(location, url);
        if (next === null || hop >= MAX_REDIRECTS) return false;
        base ??= new URL(baseUrl);
        return next.origin === origin && withinBase(next, base);
      };
      current = new Exchange(maxBodyBytes, followable);
      const answer = await current.run({
        origin: hop === 0 ? origin : url.origin,
        path: `${url.pathname}${url.search}`,
        method: method as Dispatcher.HttpMethod,
        headers: { 'user-agent': USER_AGENT, ...headers },
        body,
        // The timer above is the one time-out; undici's own would answer 502 instead of 504.
        headersTimeout: 0,
        bodyTimeout: 0,
      });
      if (!answer.ok) {
        if (timedOut) return err({ kind: 'upstream_timeout' });
        return err({ kind: 'upstream_unreachable', cause: failureCode(answer.error) });
      }
      const { status, location } = answer.value;
      if (location !== undefined) {
        // 303 (and 301/302 after a non-GET, as browsers do) continue as a GET without body.
        if (status === 303 || ((status === 301 || status === 302) && method !== 'GET' && method !== 'HEAD')) {
          method = 'GET';
          body = undefined;
          headers = withoutBodyHeaders(headers);
        }
        url = new URL(location, url);
        continue;
      }
      if (status >= 200 && status < 300) {
        if (answer.value.over) return err({ kind: 'upstream_too_large', limit: maxBodyBytes });
        return ok({ status, contentType: answer.value.contentType, body: answer.value.body });
      }
      // Only the first 64 KiB of an error body is ever shown: reading stopped there.
      return err({ kind: 'upstream_error', status, body: excerpt(answer.value.body) });
    }
  } finally {
    clearTimeout(timer);
  }
}

/** One response as the exchange read it. `location` is set when it is a redirect to follow. */
interface HopAnswer {
  status: number;
  contentType: string | null;
  location: string | undefined;
  body: Buffer;
  /** The body went past the limit of its kind; reading stopped and the connection was closed. */
  over: boolean;
}

const TIMED_OUT = new Error('upstream time-out');
/** Our own reason to stop reading a response (limit reached): not a failure of the upstream. */
const STOPPED = new Error('stopped reading');
/** What undici's `dump()` reads of a redirect's body before closing the connection instead. */
const REDIRECT_BODY_BYTES = 128 * 1024;

/**
 * One request/response through undici's dispatcher. The body is kept up to the limit of its kind
 * (2xx: the call's limit, refused at once when Content-Length says more; redirect to follow:
 * discarded, up to 128 KiB; anything else: the excerpt); past it, reading stops, the connection
 * is closed, and the answer says `over`. Settles once: the first of its end, a failure, or
 * `cancel` (the time-out) wins; a later event only closes what is left.
 */
class Exchange implements Dispatcher.DispatchHandlers {
  readonly #maxBodyBytes: number;
  readonly #followable: (location: string) => boolean;
  #settle: ((outcome: Result<HopAnswer, Error>) => void) | undefined;
  #abort: ((reason?: Error) => void) | undefined;
  #settled = false;
  #status = 0;
  #contentType: string | null = null;
  #location: string | undefined;
  #limit = 0;
  #keep = true;
  #chunks: Buffer[] = [];
  #size = 0;

  constructor(maxBodyBytes: number, followable: (location: string) => boolean) {
    this.#maxBodyBytes = maxBodyBytes;
    this.#followable = followable;
  }

  run(options: Dispatcher.DispatchOptions): Promise<Result<HopAnswer, Error>> {
    return new Promise((resolve) => {
      this.#settle = resolve;
      try {
        dispatcher.dispatch(options, this);
      } catch (error) {
        this.#finish(err(error as Error));
      }
    });
  }

  /** Ends the exchange now with `reason` as its failure (the time-out). */
  cancel(reason: Error): void {
    this.#finish(err(reason));
    this.#abort?.(reason);
  }

  onConnect(abort: (reason?: Error) => void): void {
    // Cancelled while the request waited for a connection: it is not sent at all.
    if (this.#settled) abort(STOPPED);
    else this.#abort = abort;
  }

  onHeaders(status: number, rawHeaders: Buffer[] | string[] | null): boolean {
    if (status < 200) return true; // 1xx: the final answer follows
    this.#status = status;
    let contentType: string | undefined;
    let contentLength: string | undefined;
    let location: string | undefined;
    const raw = rawHeaders ?? [];
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const name = String(raw[i]).toLowerCase();
      if (name === 'content-type') contentType ??= String(raw[i + 1]);
      else if (name === 'content-length') contentLength ??= String(raw[i + 1]);
      else if (name === 'location') location ??= String(raw[i + 1]);
    }
    this.#contentType = contentType ?? null;
    if (REDIRECT_STATUSES.has(status) && location && this.#followable(location)) {
      this.#location = location;
      this.#keep = false;
      this.#limit = REDIRECT_BODY_BYTES;
    } else if (status >= 200 && status < 300) {
      this.#limit = this.#maxBodyBytes;
      if (contentLength !== undefined && /^\d+$/.test(contentLength) && Number(contentLength) > this.#limit) {
        this.#stop();
        return false;
      }
    } else {
      this.#limit = LIMITS.upstreamBodyExcerptBytes;
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.#settled) return false;
    this.#size += chunk.length;
    if (this.#keep) this.#chunks.push(chunk);
    if (this.#size > this.#limit) {
      this.#stop();
      return false;
    }
    return true;
  }

  onComplete(): void {
    this.#finish(ok(this.#answer(false)));
  }

  onError(error: Error): void {
    this.#finish(err(error));
  }

  /** The limit was passed: answer what came, close the connection. */
  #stop(): void {
    this.#finish(ok(this.#answer(true)));
    this.#abort?.(STOPPED);
  }

  #answer(over: boolean): HopAnswer {
    const chunks = this.#chunks;
    const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
    // A redirect whose body was too long to drain is still followed (as after undici's dump()).
    return {
      status: this.#status,
      contentType: this.#contentType,
      location: this.#location,
      body,
      over: over && this.#keep,
    };
  }

  #finish(outcome: Result<HopAnswer, Error>): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#settle?.(outcome);
  }
}

/** The request's headers without those that described the body it no longer has. */
function withoutBodyHeaders(headers: UpstreamRequest['headers']): UpstreamRequest['headers'] {
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => !/^content-(type|length|encoding)$/i.test(name)),
  ) as UpstreamRequest['headers'];
}

/** A `.` or `..` segment, also with a `;` parameter, which some servers drop (`..;/`). */
const DOT_SEGMENT = /^\.\.?(;.*)?$/;
/** Percent-decoding rounds a redirect's path is checked through (a server may decode twice). */
const DECODING_ROUNDS = 3;

/**
 * A redirect target the call may follow (docs/reference.md "Agent endpoints"): the base URL's
 * origin, no userinfo, and a path at or under the base path (`/v1` admits `/v1` and `/v1/…`, not
 * `/v10`). The URL parser has already resolved `..` and `%2e%2e` segments; a server that
 * percent-decodes the path again could still climb out through `..%2F` (or `%252e…` decoded
 * twice), so each decoding of the path must stay under the decoded base path and hold no dot
 * segment. A path that does not decode is not followed.
 */
export function withinBase(target: URL, base: URL): boolean {
  if (target.origin !== base.origin || target.username !== '' || target.password !== '') return false;
  let path = target.pathname;
  let prefix = base.pathname.replace(/\/+$/, '');
  for (let round = 0; round <= DECODING_ROUNDS; round += 1) {
    if (prefix !== '' && path !== prefix && !path.startsWith(`${prefix}/`)) return false;
    if (path.split(/[/\\]/).some((segment) => DOT_SEGMENT.test(segment))) return false;
    const decoded = safeDecode(path);
    if (decoded === null) return false;
    if (decoded === path) return true;
    path = decoded;
    prefix = safeDecode(prefix) ?? prefix;
  }
  return false;
}

function safeDecode(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
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
  const mediaType = contentType === null ? '' : essence(contentType);
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
