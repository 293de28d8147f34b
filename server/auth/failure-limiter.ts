import { LRUCache } from 'lru-cache';

/** Options of {@link FailureLimiter}. */
export interface FailureLimiterOptions {
  /** Failures allowed per subject within one window. */
  limit: number;
  windowMs: number;
  /** Subjects remembered at once; the oldest are forgotten first (memory stays bounded under a flood). */
  maxSubjects: number;
}

interface Window {
  startedAt: number;
  failures: number;
}

/**
 * Counts failed verifications per subject (a key id, a client address) in fixed windows, so the
 * caller can refuse further attempts BEFORE paying for argon2. Only failures count: a subject that
 * keeps succeeding is never limited.
 */
export class FailureLimiter {
  readonly #windows: LRUCache<string, Window>;

  constructor(private readonly options: FailureLimiterOptions) {
    this.#windows = new LRUCache({ max: options.maxSubjects });
  }

  /** true when `subject` has used up its failures for the current window. */
  exhausted(subject: string, now: number): boolean {
    const window = this.#windows.get(subject);
    return (
      window !== undefined &&
      now - window.startedAt < this.options.windowMs &&
      window.failures >= this.options.limit
    );
  }

  /**
   * Counts one failure. Callers count an attempt BEFORE the expensive check and {@link forgive} it
   * when it succeeds, so a burst of concurrent attempts cannot all slip under the limit.
   */
  recordFailure(subject: string, now: number): void {
    const window = this.#windows.get(subject);
    if (!window || now - window.startedAt >= this.options.windowMs) {
      this.#windows.set(subject, { startedAt: now, failures: 1 });
    } else {
      window.failures += 1;
    }
  }

  /** Takes back a failure counted ahead of a check that then succeeded. */
  forgive(subject: string, now: number): void {
    const window = this.#windows.get(subject);
    if (window && now - window.startedAt < this.options.windowMs && window.failures > 0) window.failures -= 1;
  }
}
