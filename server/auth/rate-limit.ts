import { LRUCache } from 'lru-cache';
import { err, ok, type Result } from '../result.ts';

const WINDOW_MS = 60_000;

/** Let through, or refused with the seconds until the oldest counted call leaves the window. */
export type RateDecision = Result<void, { retryAfterSeconds: number }>;
/** The one answer of every call let through: nothing to allocate on the hot path. */
const ALLOWED: RateDecision = ok(undefined);

/**
 * At most `limit` calls per key in any 60-second window, a burst of `limit` allowed (docs/reference.md "Limits"):
 * an exact sliding window kept as a ring of the last `limit` accepted times per key. A call is
 * accepted when the oldest of those is at least 60 s old. Refused calls do not count.
 *
 * Per process, on purpose: each server enforces the limit alone (see README), which keeps the
 * check off the database on the hot path.
 */
export class SlidingWindowLimiter {
  readonly #rings: LRUCache<string, { times: Float64Array; next: number }>;

  constructor(
    private readonly limit: number,
    maxKeys = 100_000,
  ) {
    this.#rings = new LRUCache({ max: maxKeys });
  }

  take(key: string, now: number): RateDecision {
    if (this.limit === 0) return ALLOWED;
    let ring = this.#rings.get(key);
    if (!ring) {
      ring = { times: new Float64Array(this.limit).fill(Number.NEGATIVE_INFINITY), next: 0 };
      this.#rings.set(key, ring);
    }
    // `next` points at the oldest of the last `limit` accepted calls.
    const oldest = ring.times[ring.next] as number;
    if (now - oldest < WINDOW_MS) {
      return err({ retryAfterSeconds: Math.max(1, Math.ceil((oldest + WINDOW_MS - now) / 1000)) });
    }
    ring.times[ring.next] = now;
    ring.next = (ring.next + 1) % this.limit;
    return ALLOWED;
  }
}
