import { LRUCache } from 'lru-cache';
import type { Slot } from './store.ts';

/** A completed record as kept in memory. */
export interface DoneRecord {
  fingerprint: string;
  status: number;
  /** The stored JSON text: immutable, so no caller can change what the next replay answers. */
  body: string;
  expiresAt: number;
}

export interface ReplayCacheOptions {
  maxEntries: number;
  /** Total body bytes kept (UTF-16 units, close enough for a budget). */
  maxBytes: number;
  /** Larger answers are not cached; their replays read the database. */
  maxEntryBytes: number;
}

/**
 * Completed records of this process, in front of the database. Only `done` records enter, and a
 * done record never changes until it expires, so a hit answers exactly what the database would.
 * A miss, a different fingerprint or an expired entry falls through to the database, which
 * decides every answer other than a replay.
 */
export class ReplayCache {
  readonly #entries: LRUCache<string, DoneRecord>;

  constructor(options: ReplayCacheOptions) {
    this.#entries = new LRUCache<string, DoneRecord>({
      max: options.maxEntries,
      maxSize: options.maxBytes,
      maxEntrySize: options.maxEntryBytes,
      sizeCalculation: (entry) => Math.max(1, entry.body.length),
    });
  }

  /** The record to replay, or undefined when only the database can answer. */
  replay(slot: Slot, fingerprint: string, now: number): DoneRecord | undefined {
    const name = cacheKey(slot);
    const entry = this.#entries.get(name);
    if (!entry) return undefined;
    // Time comes from the injected clock, not lru-cache's own TTL (performance.now()).
    if (entry.expiresAt <= now) {
      this.#entries.delete(name);
      return undefined;
    }
    return entry.fingerprint === fingerprint ? entry : undefined;
  }

  remember(slot: Slot, record: DoneRecord): void {
    this.#entries.set(cacheKey(slot), record);
  }
}

/** Scopes never contain a newline, so the pair cannot be confused with another one. */
function cacheKey(slot: Slot): string {
  return `${slot.scope}\n${slot.key}`;
}
