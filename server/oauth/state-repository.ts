import type { Logger } from 'pino';
import { LIMITS } from '../config.ts';
import type { Prisma, PrismaClient } from '../db/generated/client.ts';
import { newId } from '../ids.ts';
import { err, ok, type Result } from '../result.ts';
import { hashState } from './state.ts';

/**
 * The OAuth state rows (docs/reference.md "End-user OAuth"): create at initiation, find and claim at the callback. The
 * state itself is a bearer secret, so only its SHA-256 is stored; the single-use rule lives in
 * {@link OAuthStateRepository.claim} alone. Built once per server in app.ts.
 */

const stateSelect = {
  id: true,
  stateHash: true,
  clientId: true,
  userId: true,
  appId: true,
  redirectUri: true,
  verifier: true,
  expiresAt: true,
  usedAt: true,
} satisfies Prisma.OAuthStateSelect;

export type StateRecord = Prisma.OAuthStateGetPayload<{ select: typeof stateSelect }>;

export interface NewState {
  stateHash: string;
  clientId: string;
  userId: string;
  appId: string;
  /** null: a flow started from MCP, which ends on the server's own page. */
  redirectUri: string | null;
  /** The PKCE verifier, sealed. */
  verifier: Uint8Array;
  expiresAt: Date;
}

/** Why a claim failed: the state was spent already (also by a concurrent callback), or is too old. */
export type ClaimOutcome = Result<void, 'used' | 'expired'>;

const PRUNE_EVERY_MS = 60_000;

export class OAuthStateRepository {
  #lastPrune = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly logger: Logger,
  ) {}

  async create(state: NewState, now: number): Promise<void> {
    await this.prisma.oAuthState.create({
      data: {
        id: newId('oauthState'),
        ...state,
        verifier: new Uint8Array(state.verifier),
        createdAt: new Date(now),
      },
      select: { id: true },
    });
    await this.#dropOldestLive(state, now);
    this.#prune(now);
  }

  /**
   * Keeps at most LIMITS.oauthLiveStatesPerGrant live states of the new state's (client, user, app),
   * dropping the oldest (by the database's insertion order). Run after the insert has committed,
   * so across servers the last of concurrent starts sees every row and leaves the newest 20. A
   * dropped state is forgotten: its callback finds no state (400 state_invalid).
   */
  async #dropOldestLive(state: NewState, now: number): Promise<void> {
    const beyond = await this.prisma.oAuthState.findMany({
      where: {
        clientId: state.clientId,
        userId: state.userId,
        appId: state.appId,
        usedAt: null,
        expiresAt: { gt: new Date(now) },
      },
      orderBy: { seq: 'desc' },
      skip: LIMITS.oauthLiveStatesPerGrant,
      select: { id: true },
    });
    if (beyond.length === 0) return;
    await this.prisma.oAuthState.deleteMany({ where: { id: { in: beyond.map((row) => row.id) } } });
  }

  /** The row of a state as the provider sent it back, or null when it is not ours. */
  find(state: string): Promise<StateRecord | null> {
    return this.prisma.oAuthState.findUnique({ where: { stateHash: hashState(state) }, select: stateSelect });
  }

  /**
   * Spends a state: of all callbacks carrying it, in every process on the database, exactly one
   * gets `ok`. The conditional UPDATE decides (`used_at IS NULL` and not expired, counted by the
   * database); `record` only spares the write when it already shows the answer.
   */
  async claim(record: StateRecord, now: number): Promise<ClaimOutcome> {
    if (record.expiresAt.getTime() <= now) return err('expired');
    if (record.usedAt !== null) return err('used');
    const { count } = await this.prisma.oAuthState.updateMany({
      where: { id: record.id, usedAt: null, expiresAt: { gt: new Date(now) } },
      data: { usedAt: new Date(now) },
    });
    return count === 1 ? ok(undefined) : err('used');
  }

  /**
   * Records how a flow started from MCP ended (`success` or a reason), for /oauth/complete.
   * `ifUnset`: only when no outcome is recorded yet.
   */
  async recordOutcome(id: string, outcome: string, ifUnset: boolean): Promise<void> {
    await this.prisma.oAuthState.updateMany({
      where: { id, redirectUri: null, ...(ifUnset ? { outcome: null } : {}) },
      data: { outcome },
    });
  }

  /**
   * A flow started from MCP, by its id: its app and recorded outcome (null while it runs), or null
   * when no such flow is known (never one with a client redirect URI).
   */
  findFlow(id: string): Promise<{ appId: string; outcome: string | null } | null> {
    return this.prisma.oAuthState.findFirst({
      where: { id, redirectUri: null },
      select: { appId: true, outcome: true },
    });
  }

  /**
   * Forgets states that expired more than LIMITS.oauthStateRetentionMs ago (a late callback within
   * that time still gets its 302). At most once a minute per server; never awaited by a request.
   */
  #prune(now: number): void {
    if (now - this.#lastPrune < PRUNE_EVERY_MS) return;
    this.#lastPrune = now;
    this.prisma.oAuthState
      .deleteMany({ where: { expiresAt: { lt: new Date(now - LIMITS.oauthStateRetentionMs) } } })
      .catch((error: unknown) => this.logger.warn({ err: error }, 'pruning old OAuth states failed'));
  }
}
