import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { PrismaClient } from '../db/generated/client.ts';
import { err, ok, type Result } from '../result.ts';
import { type DoneRecord, ReplayCache } from './cache.ts';
import { Lease } from './lease.ts';
import { type Purger, purgeExpired, startPurger } from './purge.ts';
import type { IdempotencySettings } from './settings.ts';
import { type Claim, IdempotencyStore, type Slot } from './store.ts';

/**
 * Where the environment's admin key (TOOLGATE_ADMIN_KEY, no key row, keyId null) keeps its keys.
 * API key ids look like `key_…` and never contain a colon, so the two never meet.
 */
export const ADMIN_SCOPE = 'admin:env';

/** The records' namespace of an API key: its id, or ADMIN_SCOPE for the admin key. */
export function scopeOf(keyId: string | null): string {
  return keyId ?? ADMIN_SCOPE;
}

/** An answer as the caller sees it: HTTP status and JSON body. */
export interface Answer {
  status: number;
  body: unknown;
}

export type IdempotentOutcome<A extends Answer> = Result<
  /** Executed now (its answer stored when storable), or the stored answer of the first request. */
  { replayed: false; answer: A } | { replayed: true; answer: Answer },
  /** `conflict`: the key was used with a different request (422 idempotency_key_reused);
   *  `in_progress`: the first request with the key is still running (409 idempotency_in_progress). */
  'conflict' | 'in_progress'
>;

/**
 * docs/reference.md "Idempotency": answers of calls that reached the upstream are kept (200, and 502/504 from the
 * upstream or its time-out). Anything else — a 4xx of user authorization, a 500 — is forgotten
 * so that a retry runs for real.
 */
const STORED_STATUSES: ReadonlySet<number> = new Set([200, 502, 504]);

type Begin =
  /** `expiresAt`: the record's, which a takeover keeps from the first request. */
  | { kind: 'acquired'; lease: Lease; expiresAt: number }
  | { kind: 'replay'; record: DoneRecord }
  | { kind: 'conflict' }
  | { kind: 'in_progress' };

/** Rounds of claim → read → claim; each lost round means another run changed the row meanwhile. */
const MAX_CLAIM_ROUNDS = 4;

/**
 * Idempotency keys (docs/reference.md "Idempotency"). The database row of (API key, key) decides every answer, so the
 * rules hold across processes; the in-memory cache only serves replays of completed records sooner.
 */
export class IdempotencyService {
  readonly #store: IdempotencyStore;
  readonly #cache: ReplayCache;
  #purger: Purger | undefined;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
    private readonly logger: Logger,
    readonly settings: IdempotencySettings,
  ) {
    this.#store = new IdempotencyStore(prisma);
    this.#cache = new ReplayCache(settings.cache);
  }

  /**
   * Runs `execute` at most once per (slot, request): the first call runs it, a repeat of the same
   * request replays the stored answer, a different request or a repeat during the run is refused.
   */
  async run<A extends Answer>(
    slot: Slot,
    fingerprint: string,
    execute: () => Promise<A>,
    log: Logger = this.logger,
  ): Promise<IdempotentOutcome<A>> {
    const begun = await this.#begin(slot, fingerprint, log);
    if (begun.kind === 'replay') {
      return ok({
        replayed: true,
        answer: { status: begun.record.status, body: JSON.parse(begun.record.body) },
      });
    }
    if (begun.kind !== 'acquired') return err(begun.kind);

    const { lease } = begun;
    let answer: A;
    try {
      answer = await execute();
    } catch (error) {
      // No answer to keep: the retry must be able to run.
      await lease.release();
      throw error;
    }
    if (!STORED_STATUSES.has(answer.status)) {
      await lease.release();
      return ok({ replayed: false, answer });
    }
    const body = JSON.stringify(answer.body);
    if (await lease.complete(answer.status, body)) {
      this.#cache.remember(slot, { fingerprint, status: answer.status, body, expiresAt: begun.expiresAt });
    }
    return ok({ replayed: false, answer });
  }

  /** One purge pass over expired records (also what the timer runs). */
  purge(): Promise<number> {
    return purgeExpired(this.prisma, this.clock.now(), this.settings.purge);
  }

  /** Starts the purge timer; stopped by close(). */
  startPurging(): void {
    this.#purger ??= startPurger(() => this.purge(), this.settings.purgeIntervalMs, this.logger);
  }

  async close(): Promise<void> {
    await this.#purger?.stop();
  }

  async #begin(slot: Slot, fingerprint: string, log: Logger): Promise<Begin> {
    const now = this.clock.now();
    const cached = this.#cache.replay(slot, fingerprint, now);
    if (cached) return { kind: 'replay', record: cached };

    const claim: Claim = {
      fingerprint,
      owner: randomUUID(),
      now,
      leaseUntil: now + this.settings.leaseMs,
      expiresAt: now + this.settings.ttlMs,
    };
    const acquired = (expiresAt = claim.expiresAt): Begin => ({
      kind: 'acquired',
      lease: new Lease(this.#store, slot, claim.owner, this.clock, this.settings, log),
      expiresAt,
    });

    for (let round = 0; round < MAX_CLAIM_ROUNDS; round += 1) {
      if (await this.#store.insert(slot, claim)) return acquired();
      const row = await this.#store.find(slot);
      if (!row) continue; // released between our insert and our read: try to insert again
      if (row.expiresAt <= now) {
        // Past its 24 hours the key is as new, whatever it held (the purge may not have come by yet).
        if (await this.#store.replaceExpired(slot, claim)) return acquired();
        continue;
      }
      if (row.fingerprint !== fingerprint) return { kind: 'conflict' };
      if (row.state === 'done' && row.responseStatus !== null && row.responseBody !== null) {
        const record = {
          fingerprint,
          status: row.responseStatus,
          body: row.responseBody,
          expiresAt: row.expiresAt,
        };
        this.#cache.remember(slot, record);
        return { kind: 'replay', record };
      }
      if (row.leaseUntil >= now) return { kind: 'in_progress' };
      if (await this.#store.takeOver(slot, claim)) {
        log.info('took over an idempotency record whose lease had run out');
        return acquired(row.expiresAt);
      }
    }
    // Every round lost to another run, which therefore holds the record now.
    return { kind: 'in_progress' };
  }
}
