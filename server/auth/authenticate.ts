import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import { LIMITS } from '../config.ts';
import type { PrismaClient } from '../db/generated/client.ts';
import { err, ok, type Result } from '../result.ts';
import { SingleFlight } from '../single-flight.ts';
import { keyDigest, keyIdOf, verifyApiKey } from './api-keys.ts';
import { FailureLimiter } from './failure-limiter.ts';
import { SCOPE } from './scopes.ts';

/** Who is calling: an API key of a client, or the bootstrap admin key from the environment. */
export interface Principal {
  /** null for TOOLGATE_ADMIN_KEY, which has no row. */
  keyId: string | null;
  clientId: string | null;
  scopes: readonly string[];
}

export type AuthOutcome = Result<Principal, 'invalid_api_key'>;

/** Where a request comes from, for the failed-attempt limiter. */
export interface CallerInfo {
  /** The client's address (the socket's remote address). */
  address?: string;
}

export interface VerifierStats {
  argon2Runs: number;
  refusedBeforeArgon2: number;
}

interface VerifiedEntry {
  principal: Principal;
  checkedAt: number;
  lastUsedWrittenAt: number;
}

// RFC 9110 §11.1: the scheme is case-insensitive (`bearer`, `BEARER` are the same credential).
const BEARER = /^Bearer ([\x21-\x7e]{1,512})$/i;

/** The credential of an `Authorization: Bearer <credential>` value, or undefined when it is not one. */
export function bearerCredential(authorization: string | undefined): string | undefined {
  return authorization ? BEARER.exec(authorization)?.[1] : undefined;
}

/**
 * Verifies API keys. argon2id is the expensive part, so it is kept off the hot path:
 * - a verified key is cached by the SHA-256 of the key (never the key) and only its row is re-read
 *   every LIMITS.apiKeyRecheckMs, so a revocation reaches every server sharing the database in time;
 * - a wrong key is remembered briefly in a cache of its own (a flood of random secrets cannot
 *   evict verified keys);
 * - failed verifications are counted per key id and per client address, and past the limit a new
 *   wrong secret is refused BEFORE argon2 runs. The limit bounds argon2 work spent on wrong
 *   secrets, never the key: a key verified before answers from the cache whatever the flood, and
 *   the answer to a limited attempt is the same 401 as to any wrong key.
 * Concurrent checks of one key share one verification.
 */
export class ApiKeyVerifier {
  readonly #verified = new LRUCache<string, VerifiedEntry>({ max: LIMITS.apiKeyCacheSize });
  readonly #refused = new LRUCache<string, number>({ max: LIMITS.apiKeyRefusedCacheSize });
  readonly #checks = new SingleFlight<string, Principal | null>();
  readonly #failuresByKey = new FailureLimiter({
    limit: LIMITS.apiKeyFailuresPerKeyId,
    windowMs: LIMITS.apiKeyFailureWindowMs,
    maxSubjects: LIMITS.apiKeyRefusedCacheSize,
  });
  readonly #failuresByAddress = new FailureLimiter({
    limit: LIMITS.apiKeyFailuresPerAddress,
    windowMs: LIMITS.apiKeyFailureWindowMs,
    maxSubjects: LIMITS.apiKeyRefusedCacheSize,
  });
  /** Has this address failed on this key id in the window (limit 1: one failure is enough)? */
  readonly #failuresByKeyAndAddress = new FailureLimiter({
    limit: 1,
    windowMs: LIMITS.apiKeyFailureWindowMs,
    maxSubjects: LIMITS.apiKeyRefusedCacheSize,
  });
  readonly #stats: VerifierStats = { argon2Runs: 0, refusedBeforeArgon2: 0 };
  readonly #adminDigest: string | null;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
    private readonly logger: Logger,
    adminKey: string | undefined,
  ) {
    this.#adminDigest = adminKey ? keyDigest(adminKey) : null;
  }

  async authenticate(authorization: string | undefined, caller: CallerInfo = {}): Promise<AuthOutcome> {
    const apiKey = bearerCredential(authorization);
    if (!apiKey) return err('invalid_api_key');
    const cacheKey = keyDigest(apiKey);
    // Digests, not keys, are compared: how long the comparison takes can tell at most how much of
    // the admin key's SHA-256 a guess matches, which brings no guess of the key itself closer.
    if (cacheKey === this.#adminDigest) return ok({ keyId: null, clientId: null, scopes: [SCOPE.admin] });
    const now = this.clock.now();

    const known = this.#verified.get(cacheKey);
    if (known) {
      if (now - known.checkedAt >= LIMITS.apiKeyRecheckMs) {
        const principal = await this.#checks.run(cacheKey, () => this.#recheck(known.principal));
        if (!principal) {
          this.#verified.delete(cacheKey);
          this.#refused.set(cacheKey, now);
          return err('invalid_api_key');
        }
        known.principal = principal;
        known.checkedAt = now;
      }
      this.#touch(known, now);
      return ok(known.principal);
    }

    const refusedAt = this.#refused.get(cacheKey);
    if (refusedAt !== undefined && now - refusedAt < LIMITS.apiKeyRecheckMs) return err('invalid_api_key');
    const keyId = keyIdOf(apiKey);
    if (!keyId) return err('invalid_api_key');
    // The same key already being verified: wait for that verdict, at no cost of its own.
    const joining = this.#checks.has(cacheKey);
    if (!joining && this.#overFailureLimit(keyId, caller.address, now)) {
      this.#stats.refusedBeforeArgon2 += 1;
      return err('invalid_api_key');
    }
    // Counted as a failure until it proves otherwise: concurrent wrong keys cannot all slip under.
    const subjects = joining ? [] : this.#failureSubjects(keyId, caller.address);
    for (const [limiter, subject] of subjects) limiter.recordFailure(subject, now);
    const principal = await this.#checks.run(cacheKey, () => this.#verify(keyId, apiKey));
    if (!principal) {
      this.#refused.set(cacheKey, now);
      return err('invalid_api_key');
    }
    for (const [limiter, subject] of subjects) limiter.forgive(subject, now);
    const entry = this.#verified.get(cacheKey) ?? { principal, checkedAt: now, lastUsedWrittenAt: 0 };
    this.#verified.set(cacheKey, entry);
    this.#refused.delete(cacheKey);
    this.#touch(entry, now);
    return ok(entry.principal);
  }

  /** What the verifier did since start: argon2 runs, and wrong keys refused before argon2. */
  stats(): Readonly<VerifierStats> {
    return { ...this.#stats };
  }

  /**
   * A wrong key must not cost argon2 past the limits: an address that failed too often is refused
   * outright; a key id under a flood is refused to every address that already failed on it, while
   * an address with no failure on it still gets its one verification — so the key's owner, calling
   * from elsewhere, is never locked out by someone else's flood. (Behind one shared address, as a
   * NAT, the owner shares that address's fate for one window.)
   */
  #overFailureLimit(keyId: string, address: string | undefined, now: number): boolean {
    const keyFlooded = this.#failuresByKey.exhausted(keyId, now);
    if (!address) return keyFlooded;
    if (this.#failuresByAddress.exhausted(address, now)) return true;
    return keyFlooded && this.#failuresByKeyAndAddress.exhausted(`${keyId} ${address}`, now);
  }

  #failureSubjects(keyId: string, address: string | undefined): Array<[FailureLimiter, string]> {
    const subjects: Array<[FailureLimiter, string]> = [[this.#failuresByKey, keyId]];
    if (address) {
      subjects.push(
        [this.#failuresByAddress, address],
        [this.#failuresByKeyAndAddress, `${keyId} ${address}`],
      );
    }
    return subjects;
  }

  /** Drops a key from this process's cache at once (other processes notice within the recheck time). */
  evictKey(keyId: string): void {
    for (const [cacheKey, entry] of this.#verified.entries()) {
      if (entry.principal.keyId === keyId) this.#verified.delete(cacheKey);
    }
  }

  async #verify(keyId: string, apiKey: string): Promise<Principal | null> {
    const row = await this.prisma.apiKey.findUnique({
      where: { id: keyId },
      select: { id: true, clientId: true, hash: true, scopes: true, revokedAt: true },
    });
    if (!row || row.revokedAt) return null;
    this.#stats.argon2Runs += 1;
    if (!(await verifyApiKey(row.hash, apiKey))) return null;
    return { keyId: row.id, clientId: row.clientId, scopes: row.scopes };
  }

  /** The secret was verified before; only revocation and scope changes need the row again. */
  async #recheck(previous: Principal): Promise<Principal | null> {
    const row = await this.prisma.apiKey.findUnique({
      where: { id: previous.keyId as string },
      select: { clientId: true, scopes: true, revokedAt: true },
    });
    if (!row || row.revokedAt) return null;
    return { keyId: previous.keyId, clientId: row.clientId, scopes: row.scopes };
  }

  /** last_used_at is bookkeeping: written at most once a minute per key and process, never awaited. */
  #touch(entry: VerifiedEntry, now: number): void {
    const { keyId } = entry.principal;
    if (!keyId || now - entry.lastUsedWrittenAt < LIMITS.apiKeyLastUsedWriteMs) return;
    entry.lastUsedWrittenAt = now;
    this.prisma.apiKey
      .update({ where: { id: keyId }, data: { lastUsedAt: new Date(now) }, select: { id: true } })
      .catch((error: unknown) => this.logger.warn({ err: error, keyId }, 'last_used_at write failed'));
  }
}
