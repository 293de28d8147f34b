import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { decodeBlob, encodeHeader, IV_BYTES } from './blob.ts';
import { createDataKeyResolver, DATA_KEY_BYTES } from './data-keys.ts';
import { EnvelopeError, envelopeErrorFromKms } from './envelope-error.ts';
import type { Kms, WrappedKey } from './kms/kms.ts';

export { createKms, type KmsOptions } from './kms/create-kms.ts';

/** Options of {@link createEnvelope}. */
export interface EnvelopeOptions {
  kms: Kms;
  /** Current time in milliseconds for the data-key cache's TTL (e.g. `Date.now`); default `performance.now()`. */
  clock?: () => number;
  /** How long unwrapped data keys stay in memory; default 5 minutes, 0 turns the cache off. */
  dataKeyCacheTtlMs?: number;
  /** Most data keys kept in memory at once; default 1000. */
  dataKeyCacheSize?: number;
}

/** Seals and opens secrets at rest. See {@link createEnvelope}. */
export interface Envelope {
  /**
   * Encrypts `plaintext` (a string is taken as UTF-8) into a self-describing blob bound to
   * `context`. @throws {EnvelopeError} `KMS_UNAVAILABLE` when the data key cannot be wrapped.
   */
  seal(plaintext: Uint8Array | string, context: string): Promise<Buffer>;
  /**
   * Decrypts a blob made by `seal` with the same `context`.
   * @throws {EnvelopeError} `ENVELOPE_FORMAT`, `ENVELOPE_AUTH_FAILED` (wrong context or a modified
   *   blob), `KMS_KEY_MISMATCH` (sealed under another KEK or key) or `KMS_UNAVAILABLE`.
   */
  open(blob: Uint8Array, context: string): Promise<Buffer>;
  /** {@link Envelope.open}, decoded as UTF-8; invalid UTF-8 is `ENVELOPE_FORMAT`. */
  openString(blob: Uint8Array, context: string): Promise<string>;
}

const DEFAULT_CACHE_TTL_MS = 5 * 60 * 1000;
const DEFAULT_CACHE_SIZE = 1000;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Creates envelope encryption over a KMS: each `seal` draws a fresh random AES-256-GCM data key
 * and a random 12-byte IV, encrypts with additional data = the blob header ‖ `context`, and stores
 * the data key wrapped by the KMS inside the blob (format in `blob.ts`). The context names the row
 * a secret belongs to, so a blob copied to another row does not open there.
 *
 * @example
 * ```ts
 * const envelope = createEnvelope({ kms: await createKms({ kind: 'local', kekPath: './.toolgate/kek' }) });
 * const blob = await envelope.seal(JSON.stringify(tokens), `connection:${clientId}:${userId}:${appId}`);
 * const json = await envelope.openString(blob, `connection:${clientId}:${userId}:${appId}`);
 * ```
 */
export function createEnvelope(options: EnvelopeOptions): Envelope {
  const { kms } = options;
  const dataKeys = createDataKeyResolver({
    kms,
    ttlMs: options.dataKeyCacheTtlMs ?? DEFAULT_CACHE_TTL_MS,
    maxEntries: options.dataKeyCacheSize ?? DEFAULT_CACHE_SIZE,
    clock: options.clock ?? (() => performance.now()),
  });

  async function open(blob: Uint8Array, context: string): Promise<Buffer> {
    assertBytes(blob, '"blob"');
    const aadContext = contextBytes(context);
    const parts = decodeBlob(blob);
    const dataKey = await dataKeys.unwrap(parts.keyId, parts.wrapped);
    try {
      const decipher = createDecipheriv('aes-256-gcm', dataKey, parts.iv)
        .setAAD(Buffer.concat([parts.header, aadContext]))
        .setAuthTag(parts.tag);
      return Buffer.concat([decipher.update(parts.ciphertext), decipher.final()]);
    } catch (error) {
      throw new EnvelopeError(
        'ENVELOPE_AUTH_FAILED',
        'blob failed authentication: wrong context, or the blob was modified',
        { cause: error },
      );
    } finally {
      dataKey.fill(0);
    }
  }

  return {
    async seal(plaintext, context) {
      const data = typeof plaintext === 'string' ? Buffer.from(plaintext, 'utf8') : plaintext;
      assertBytes(data, '"plaintext"');
      const aadContext = contextBytes(context);
      const dataKey = randomBytes(DATA_KEY_BYTES);
      try {
        let wrappedKey: WrappedKey;
        try {
          wrappedKey = await kms.wrapKey(dataKey);
        } catch (error) {
          throw envelopeErrorFromKms(error, 'wrap');
        }
        const header = encodeHeader(wrappedKey.keyId, wrappedKey.wrapped);
        const iv = randomBytes(IV_BYTES);
        const cipher = createCipheriv('aes-256-gcm', dataKey, iv).setAAD(Buffer.concat([header, aadContext]));
        const ciphertext = Buffer.concat([cipher.update(data), cipher.final()]);
        return Buffer.concat([header, iv, cipher.getAuthTag(), ciphertext]);
      } finally {
        dataKey.fill(0);
      }
    },
    open,
    async openString(blob, context) {
      const plaintext = await open(blob, context);
      try {
        return utf8.decode(plaintext);
      } catch (error) {
        throw new EnvelopeError('ENVELOPE_FORMAT', 'blob does not hold UTF-8 text', { cause: error });
      } finally {
        plaintext.fill(0);
      }
    },
  };
}

/** The context must name something: an empty one would bind the blob to nothing. */
function contextBytes(context: string): Buffer {
  if (typeof context !== 'string')
    throw invalidArgument('ERR_INVALID_ARG_TYPE', '"context" must be a string');
  if (context.length === 0) throw invalidArgument('ERR_INVALID_ARG_VALUE', '"context" must not be empty');
  return Buffer.from(context, 'utf8');
}

function assertBytes(value: unknown, name: string): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array)) {
    throw invalidArgument('ERR_INVALID_ARG_TYPE', `${name} must be a Buffer or Uint8Array`);
  }
}

function invalidArgument(code: string, message: string): TypeError {
  return Object.assign(new TypeError(message), { code });
}
