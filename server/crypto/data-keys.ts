import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { SingleFlight } from '../single-flight.ts';
import { EnvelopeError, envelopeErrorFromKms } from './envelope-error.ts';
import type { Kms } from './kms/kms.ts';

/** Data keys are AES-256 keys. */
export const DATA_KEY_BYTES = 32;

/** Options of {@link createDataKeyResolver}. */
export interface DataKeyResolverOptions {
  kms: Kms;
  /** How long an unwrapped data key stays in memory; 0 turns the cache off. */
  ttlMs: number;
  /** At most this many data keys are kept. */
  maxEntries: number;
  /** Milliseconds, monotonic enough for TTLs; injectable so tests need not sleep. */
  clock: () => number;
}

/** Unwraps data keys through the KMS, with a short-lived in-memory cache in front. */
export interface DataKeyResolver {
  /**
   * The data key for `(keyId, wrapped)`, as a fresh copy the caller owns (and may zero).
   * @throws {EnvelopeError}
   */
  unwrap(keyId: string, wrapped: Buffer): Promise<Buffer>;
}

/**
 * Creates the resolver. Only successful unwraps are cached; a failure is thrown to every caller
 * waiting on it and forgotten, so the next open asks the KMS again. Concurrent opens of blobs
 * sharing a wrapped key share one KMS call. Cached keys are zeroed when they leave the cache.
 */
export function createDataKeyResolver(options: DataKeyResolverOptions): DataKeyResolver {
  const { kms } = options;
  const cache =
    options.ttlMs > 0
      ? new LRUCache<string, Buffer>({
          max: options.maxEntries,
          ttl: options.ttlMs,
          // Read the clock on every check rather than lru-cache's timer-refreshed snapshot.
          ttlResolution: 0,
          perf: { now: options.clock },
          dispose: (key) => key.fill(0),
        })
      : undefined;
  const unwraps = new SingleFlight<string, Buffer>();

  async function unwrapChecked(keyId: string, wrapped: Buffer): Promise<Buffer> {
    let key: Buffer;
    try {
      key = await kms.unwrapKey(keyId, wrapped);
    } catch (error) {
      throw envelopeErrorFromKms(error, 'unwrap');
    }
    if (key.length !== DATA_KEY_BYTES) {
      key.fill(0);
      throw new EnvelopeError('ENVELOPE_FORMAT', `unwrapped data key has ${key.length} bytes, not 32`);
    }
    return key;
  }

  return {
    async unwrap(keyId, wrapped) {
      if (!cache) return unwrapChecked(keyId, wrapped);
      const id = cacheId(keyId, wrapped);
      const hit = cache.get(id);
      if (hit) return Buffer.from(hit);
      const key = await unwraps.run(id, async () => {
        const unwrapped = await unwrapChecked(keyId, wrapped);
        cache.set(id, unwrapped);
        return unwrapped;
      });
      return Buffer.from(key);
    },
  };
}

/** Wrapped keys are not secret, but hashing keeps cache keys small and uniform. */
function cacheId(keyId: string, wrapped: Buffer): string {
  const idBytes = Buffer.from(keyId, 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32BE(idBytes.length);
  return createHash('sha256').update(length).update(idBytes).update(wrapped).digest('base64url');
}
