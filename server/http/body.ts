import type { IncomingMessage } from 'node:http';
import { essence } from '../catalog/media.ts';
import { LIMITS } from '../config.ts';
import { err, ok, type Result } from '../result.ts';
import { readUpTo } from './read-stream.ts';

export type BodyFailure = 'payload_too_large' | 'unsupported_media_type' | 'malformed_json' | 'too_deep';

export type BodyOutcome = Result<unknown, BodyFailure>;

/** docs/reference.md "Limits": JSON nested deeper than this is refused (400) before anything walks it. */
export const MAX_JSON_DEPTH = 128;

/** `application/json`, with or without parameters such as charset. */
export function isJsonMediaType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  return essence(contentType) === 'application/json';
}

export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Reads an `application/x-www-form-urlencoded` body of at most `limit` bytes (the OAuth endpoints,
 * RFC 6749 §3.2). No body reads as an empty form.
 */
export async function readFormBody(
  req: IncomingMessage,
  limit: number,
): Promise<Result<URLSearchParams, 'payload_too_large' | 'unsupported_media_type'>> {
  const read = await readBytesOf(req, limit, isFormMediaType);
  if (!read.ok) return read;
  return ok(new URLSearchParams(read.value?.toString('utf8') ?? ''));
}

function isFormMediaType(contentType: string | undefined): boolean {
  return essence(contentType ?? '') === 'application/x-www-form-urlencoded';
}

/**
 * Reads a JSON body of at most `limit` bytes. An oversize body is drained rather than cut off, so the
 * client reads the 413 instead of a reset connection (discardBody).
 */
export async function readJsonBody(req: IncomingMessage, limit: number): Promise<BodyOutcome> {
  const read = await readJsonBytes(req, limit);
  if (!read.ok || read.value === undefined) return read;
  return parseJson(read.value.toString('utf8'));
}

/**
 * The bytes of a JSON body of at most `limit` bytes, not parsed (undefined: no body): what
 * readJsonBody checks before parsing, for a body parsed elsewhere (an app registration's, on the
 * compile worker: server/catalog/compiler.ts).
 */
export async function readJsonBytes(
  req: IncomingMessage,
  limit: number,
): Promise<Result<Buffer | undefined, BodyFailure>> {
  const read = await readBytesOf(req, limit, isJsonMediaType);
  if (read.ok && read.value?.length === 0) return err('malformed_json');
  return read;
}

/**
 * The bytes of a body of a media type `accepts`, at most `limit` of them (undefined: no body). A
 * body refused, by its type or its size, is drained (discardBody), never cut off.
 */
async function readBytesOf(
  req: IncomingMessage,
  limit: number,
  accepts: (contentType: string | undefined) => boolean,
): Promise<Result<Buffer | undefined, 'payload_too_large' | 'unsupported_media_type'>> {
  if (!hasBody(req)) return ok(undefined);
  if (!accepts(req.headers['content-type'])) {
    discardBody(req);
    return err('unsupported_media_type');
  }
  if (Number(req.headers['content-length'] ?? Number.NaN) > limit) {
    discardBody(req);
    return err('payload_too_large');
  }
  const read = await readUpTo(req, limit);
  if (read.over) {
    discardBody(req);
    return err('payload_too_large');
  }
  return ok(read.bytes);
}

/**
 * JSON text → value, refusing nesting deeper than MAX_JSON_DEPTH. The depth is counted on the
 * text in one pass without recursion, so a body of 100,000 brackets costs a scan, not a stack:
 * every later walk (validation, fingerprints, request building) may then recurse safely.
 */
export function parseJson(text: string): BodyOutcome {
  if (nestsTooDeep(text)) return err('too_deep');
  try {
    return ok(JSON.parse(text));
  } catch {
    return err('malformed_json');
  }
}

/**
 * Whether a JSON text nests brackets deeper than MAX_JSON_DEPTH (brackets inside strings do not
 * count). Nesting past the limit needs more opening brackets than the limit, so a text with fewer
 * (nearly every body) is settled by counting them with indexOf, in native code, at a twentieth of
 * the cost of the walk; only the others are walked.
 */
export function nestsTooDeep(text: string): boolean {
  let brackets = 0;
  for (const bracket of ['{', '[']) {
    for (let i = text.indexOf(bracket); i !== -1; i = text.indexOf(bracket, i + 1)) {
      brackets += 1;
      if (brackets > MAX_JSON_DEPTH) return deepestNesting(text) > MAX_JSON_DEPTH;
    }
  }
  return false;
}

/** The deepest bracket nesting of a JSON text (strings skipped); stops counting past the limit. */
function deepestNesting(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i += 1; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth += 1;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > MAX_JSON_DEPTH) return deepest;
      }
    } else if (c === 0x5d || c === 0x7d) depth -= 1;
  }
  return deepest;
}

const DISCARDING = new WeakSet<IncomingMessage>();

/**
 * Reads and drops the rest of a request body that will not be used (a route that takes none, a
 * refusal answered before the body is read): the connection stays in step and open, so a client
 * still sending reads the answer instead of meeting a closed socket (EPIPE, ECONNRESET), and may
 * send its next request on it. Past `bound` bytes the connection is closed: draining is bounded.
 * Every route drops an unread body through this, never by a bare `req.resume()`.
 */
export function discardBody(req: IncomingMessage, bound: number = LIMITS.drainBytes): void {
  if (req.complete || DISCARDING.has(req)) return;
  DISCARDING.add(req);
  let seen = 0;
  req.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > bound) req.socket.destroy();
  });
  // A client that goes away meanwhile is no failure of ours.
  req.on('error', () => {});
  req.resume();
}
