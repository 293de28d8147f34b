import { EnvelopeError } from './envelope-error.ts';

/**
 * The sealed-blob format, version 1. Big-endian lengths; every field but the ciphertext has a
 * fixed size or a length prefix, so the format needs no JSON and no base64:
 *
 * ```
 * offset  size  field
 * 0       3     magic "TGE"
 * 3       1     format version (1)
 * 4       2     K = byte length of the KMS key id
 * 6       K     KMS key id, UTF-8 (e.g. "local:3f2a…" or a versioned Key Vault key URL)
 * 6+K     2     W = byte length of the wrapped data key
 * 8+K     W     wrapped data key (as the KMS returned it)
 * 8+K+W   12    AES-256-GCM IV
 * 20+K+W  16    AES-256-GCM tag
 * 36+K+W  rest  ciphertext (same length as the plaintext)
 * ```
 *
 * The header (offset 0 up to the IV) is authenticated: it is the first part of the GCM
 * additional data, followed by the caller's context.
 */
export const BLOB_FORMAT_VERSION = 1;

const MAGIC = Buffer.from('TGE', 'latin1');
export const IV_BYTES = 12;
export const TAG_BYTES = 16;
const MAX_KEY_ID_BYTES = 2048;
const MAX_WRAPPED_BYTES = 4096;

/** The parts of a parsed blob; `header` is the exact bytes the GCM additional data starts with. */
export interface BlobParts {
  version: number;
  keyId: string;
  wrapped: Buffer;
  header: Buffer;
  iv: Buffer;
  tag: Buffer;
  ciphertext: Buffer;
}

/** Encodes the header: magic, version, key id and wrapped data key. Throws if they do not fit. */
export function encodeHeader(keyId: string, wrapped: Buffer): Buffer {
  const id = Buffer.from(keyId, 'utf8');
  if (
    id.length === 0 ||
    id.length > MAX_KEY_ID_BYTES ||
    wrapped.length === 0 ||
    wrapped.length > MAX_WRAPPED_BYTES
  ) {
    throw new EnvelopeError(
      'KMS_UNAVAILABLE',
      'the KMS answered a key id or wrapped key of an unusable size',
    );
  }
  const header = Buffer.alloc(MAGIC.length + 1 + 2 + id.length + 2 + wrapped.length);
  let at = MAGIC.copy(header, 0);
  at = header.writeUInt8(BLOB_FORMAT_VERSION, at);
  at = header.writeUInt16BE(id.length, at);
  at += id.copy(header, at);
  at = header.writeUInt16BE(wrapped.length, at);
  wrapped.copy(header, at);
  return header;
}

/**
 * Splits a blob into its parts without decrypting anything.
 *
 * @throws {EnvelopeError} `ENVELOPE_FORMAT` for a wrong magic, an unknown version or a blob
 *   shorter than its lengths say.
 */
export function decodeBlob(blob: Uint8Array): BlobParts {
  const buf = Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength);
  const reader = new Reader(buf);
  if (!reader.take(MAGIC.length).equals(MAGIC)) throw formatError('not a toolgate envelope');
  const version = reader.uint8();
  if (version !== BLOB_FORMAT_VERSION) throw formatError(`unsupported envelope format version ${version}`);
  const keyIdBytes = reader.take(reader.uint16());
  const wrapped = reader.take(reader.uint16());
  const header = buf.subarray(0, reader.offset);
  const iv = reader.take(IV_BYTES);
  const tag = reader.take(TAG_BYTES);
  const ciphertext = buf.subarray(reader.offset);
  if (keyIdBytes.length === 0 || wrapped.length === 0) throw formatError('envelope has an empty key field');
  return { version, keyId: keyIdBytes.toString('utf8'), wrapped, header, iv, tag, ciphertext };
}

function formatError(message: string): EnvelopeError {
  return new EnvelopeError('ENVELOPE_FORMAT', message);
}

/** A cursor that fails with ENVELOPE_FORMAT instead of reading past the end. */
class Reader {
  offset = 0;

  constructor(private readonly buf: Buffer) {}

  take(length: number): Buffer {
    if (this.offset + length > this.buf.length) throw formatError('envelope is truncated');
    const out = this.buf.subarray(this.offset, this.offset + length);
    this.offset += length;
    return out;
  }

  uint8(): number {
    return this.take(1).readUInt8(0);
  }

  uint16(): number {
    return this.take(2).readUInt16BE(0);
  }
}
