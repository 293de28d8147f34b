import { LRUCache } from 'lru-cache';
import { SingleFlight } from '../single-flight.ts';
import { grantGeneration } from './grant-writes.ts';
import type { GrantKey, GrantRow, TokenSet } from './grants.ts';

/**
 * Opened grants, cached per process so that a warm OAuth tool call runs no query and opens no
 * envelope (issue 14). The database stays the truth, as for apps (apps/registry.ts): an entry is
 * used for at most RECHECK_MS, then the row is read again (one read, however many calls wait) and
 * its tokens reused when the sealed credential is unchanged. Every grant write of this process
 * (grants.ts) drops every entry at once; a write by another server is seen within RECHECK_MS.
 * The tokens are held in memory like the data keys of crypto/data-keys.ts: never logged or sent.
 */

const RECHECK_MS = 1_000;
const MAX_ENTRIES = 10_000;

export interface OpenGrant {
  row: GrantRow;
  /** Opened only for an active grant (any other answers auth_required without its tokens). */
  tokens: TokenSet | null;
}

interface Entry {
  grant: OpenGrant;
  checkedAt: number;
  generation: number;
  /** The app version the grant was read under: a re-registered app reads it again. */
  appVersion: number;
}

export class GrantCache {
  readonly #entries = new LRUCache<string, Entry>({ max: MAX_ENTRIES });
  readonly #reads = new SingleFlight<string, OpenGrant | null>();

  /**
   * The grant of `key`: cached, or `read` (the row; null when there is none) then `open` (its
   * tokens, skipped when the sealed credential is the cached one).
   */
  get(
    key: GrantKey,
    appVersion: number,
    now: number,
    read: () => Promise<GrantRow | null>,
    open: (row: GrantRow) => Promise<TokenSet>,
  ): Promise<OpenGrant | null> {
    const id = JSON.stringify([key.clientId, key.userId, key.appId]);
    const entry = this.#entries.get(id);
    const current = entry && entry.generation === grantGeneration() && entry.appVersion === appVersion;
    if (current && now - entry.checkedAt < RECHECK_MS) return Promise.resolve(entry.grant);
    return this.#reads.run(id, async () => {
      const started = grantGeneration();
      const row = await read();
      if (!row) {
        this.#entries.delete(id);
        return null;
      }
      const same = current && Buffer.compare(entry.grant.row.credential, row.credential) === 0;
      const tokens = row.status !== 'active' ? null : same ? entry.grant.tokens : await open(row);
      const grant = { row, tokens };
      // A write during the read may not have been seen: answer it, but do not keep it.
      if (started === grantGeneration())
        this.#entries.set(id, { grant, checkedAt: now, generation: started, appVersion });
      else this.#entries.delete(id);
      return grant;
    });
  }
}
