import type { IncomingMessage } from 'node:http';

export type BodyOutcome =
  | { ok: true; value: unknown }
  | { ok: false; error: 'payload_too_large' | 'unsupported_media_type' | 'malformed_json' };

/** `application/json`, with or without parameters such as charset. */
export function isJsonMediaType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  return contentType.split(';', 1)[0]?.trim().toLowerCase() === 'application/json';
}

export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Reads a JSON body of at most `limit` bytes. An oversize body is drained rather than cut off, so the
 * client reads the 413 instead of a reset connection; past 16× the limit the socket is dropped.
 */
export async function readJsonBody(req: IncomingMessage, limit: number): Promise<BodyOutcome> {
  if (!hasBody(req)) return { ok: true, value: undefined };
  if (!isJsonMediaType(req.headers['content-type'])) {
    req.resume();
    return { ok: false, error: 'unsupported_media_type' };
  }
  const declared = Number(req.headers['content-length'] ?? Number.NaN);
  if (declared > limit) {
    drain(req, limit);
    return { ok: false, error: 'payload_too_large' };
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      drain(req, limit);
      return { ok: false, error: 'payload_too_large' };
    }
    chunks.push(chunk);
  }
  if (size === 0) return { ok: false, error: 'malformed_json' };
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks, size).toString('utf8')) };
  } catch {
    return { ok: false, error: 'malformed_json' };
  }
}

function drain(req: IncomingMessage, limit: number): void {
  let seen = 0;
  req.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > limit * 16) req.destroy();
  });
  req.resume();
}
