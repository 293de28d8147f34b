/**
 * How large texts (documents, catalogs) are stored: gzip, then base64, behind a marker no JSON or
 * YAML document can begin with. Measured (BENCHMARKS.md): writing GitHub's 11 MB document and its
 * catalog as plain text held the event loop for seconds through Prisma and the embedded PGlite;
 * packed, they are a seventh of the size. Packing runs on the compile worker; unpacking a catalog
 * is a few milliseconds.
 */
import { gunzipSync, gzipSync } from 'node:zlib';

const MARKER = '\u0001gz64:';
/** Below this, a text is stored as it is. */
const PACK_FROM = 64 * 1024;

export function packText(text: string): string {
  if (text.length < PACK_FROM) return text;
  return MARKER + gzipSync(Buffer.from(text, 'utf8'), { level: 6 }).toString('base64');
}

export function unpackText(stored: string): string {
  if (!stored.startsWith(MARKER)) return stored;
  return gunzipSync(Buffer.from(stored.slice(MARKER.length), 'base64')).toString('utf8');
}
