import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import { LIMITS } from '../config.ts';
import type { PrismaClient } from '../db/generated/client.ts';
import { digestsEqual, keyDigest, keyIdOf, verifyApiKey } from './api-keys.ts';
import { SCOPE } from './scopes.ts';

/** Who is calling: an API key of a client, or the bootstrap admin key from the environment. */
export interface Principal {
  /** null for TOOLGATE_ADMIN_KEY, which has no row. */
  keyId: string | null;
  clientId: string | null;
  scopes: readonly string[];
}

export type AuthOutcome = { ok: true; principal: Principal } | { ok: false; error: 'invalid_api_key' };

interface CacheEntry {
  principal: Principal | null;
  checkedAt: number;
  lastUsedWrittenAt: number;
}

const BEARER = /^Bearer ([\x21-\x7e]{1,512})$/;

/**
 * Verifies API keys. argon2id runs once per key per process: a verified key is cached by the
 * SHA-256 of the key (never the key), and its row is re-read every few seconds so a revocation
 * reaches every server sharing the database within LIMITS.apiKeyRecheckMs. Failures are cached
 * as briefly, so a wrong secret cannot make each request pay for argon2.
 */
export class ApiKeyVerifier {
  readonly #cache = new LRUCache<string, CacheEntry>({ max: LIMITS.apiKeyCacheSize });
  readonly #inflight = new Map<string, Promise<Principal | null>>();
  readonly #adminDigest: Buffer | null;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
    private readonly logger: Logger,
    adminKey: string | undefined,
  ) {
    this.#adminDigest = adminKey ? keyDigest(adminKey) : null;
  }

  async authenticate(authorization: string | undefined): Promise<AuthOutcome> {
    const match = authorization ? BEARER.exec(authorization) : null;
    if (!match) return { ok: false, error: 'invalid_api_key' };
    const apiKey = match[1] as string;
    const digest = keyDigest(apiKey);
    if (this.#adminDigest && digestsEqual(digest, this.#adminDigest)) {
      return { ok: true, principal: { keyId: null, clientId: null, scopes: [SCOPE.admin] } };
    }
    const cacheKey = digest.toString('base64');
    const now = this.clock.now();
    const cached = this.#cache.get(cacheKey);
    let principal: Principal | null;
    if (cached && now - cached.checkedAt < LIMITS.apiKeyRecheckMs) {
      principal = cached.principal;
    } else {
      principal = await this.#singleFlight(cacheKey, () =>
        cached?.principal ? this.#recheck(cached.principal) : this.#verify(apiKey),
      );
      this.#cache.set(cacheKey, {
        principal,
        checkedAt: now,
        lastUsedWrittenAt: cached?.lastUsedWrittenAt ?? 0,
      });
    }
    if (!principal) return { ok: false, error: 'invalid_api_key' };
    this.#touch(cacheKey, principal, now);
    return { ok: true, principal };
  }

  /** Drops a key from this process's cache at once (other processes notice within the recheck time). */
  evictKey(keyId: string): void {
    for (const [cacheKey, entry] of this.#cache.entries()) {
      if (entry.principal?.keyId === keyId) this.#cache.delete(cacheKey);
    }
  }

  async #singleFlight(key: string, work: () => Promise<Principal | null>): Promise<Principal | null> {
    const running = this.#inflight.get(key);
    if (running) return running;
    const promise = work().finally(() => this.#inflight.delete(key));
    this.#inflight.set(key, promise);
    return promise;
  }

  async #verify(apiKey: string): Promise<Principal | null> {
    const keyId = keyIdOf(apiKey);
    if (!keyId) return null;
    const row = await this.prisma.apiKey.findUnique({
      where: { id: keyId },
      select: { id: true, clientId: true, hash: true, scopes: true, revokedAt: true },
    });
    if (!row || row.revokedAt) return null;
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
  #touch(cacheKey: string, principal: Principal, now: number): void {
    const entry = this.#cache.get(cacheKey);
    if (!entry || !principal.keyId || now - entry.lastUsedWrittenAt < LIMITS.apiKeyLastUsedWriteMs) return;
    entry.lastUsedWrittenAt = now;
    this.prisma.apiKey
      .update({ where: { id: principal.keyId }, data: { lastUsedAt: new Date(now) }, select: { id: true } })
      .catch((error: unknown) =>
        this.logger.warn({ err: error, keyId: principal.keyId }, 'last_used_at write failed'),
      );
  }
}
