import { type Config, LIMITS } from '../config.ts';
import type { ReplayCacheOptions } from './cache.ts';
import type { PurgeOptions } from './purge.ts';

export interface IdempotencySettings {
  /** How long an answer is kept, from the first request (docs/reference.md "Idempotency": 24 hours). */
  ttlMs: number;
  /** An in-progress record whose lease has run out belongs to a dead run and may be taken over. */
  leaseMs: number;
  /** A live run extends its lease this often, so a slow refresh plus a retried call never loses it. */
  renewEveryMs: number;
  purgeIntervalMs: number;
  purge: PurgeOptions;
  cache: ReplayCacheOptions;
}

/** Covers the database round trips and a clock skew between servers on top of the upstream time-out. */
const LEASE_MARGIN_MS = 10_000;

export function idempotencySettings(config: Pick<Config, 'upstreamTimeoutMs'>): IdempotencySettings {
  const leaseMs = config.upstreamTimeoutMs + LEASE_MARGIN_MS;
  return {
    ttlMs: LIMITS.idempotencyTtlMs,
    leaseMs,
    renewEveryMs: Math.max(1_000, Math.floor(leaseMs / 3)),
    purgeIntervalMs: 60_000,
    purge: { batchSize: 500, maxBatches: 100 },
    cache: { maxEntries: 10_000, maxBytes: 32 * 1024 * 1024, maxEntryBytes: 1024 * 1024 },
  };
}
