import type { PrismaClient } from '../db/generated/client.ts';

/** One (API key, idempotency key) pair: the primary key of a record. */
export interface Slot {
  /** The API key's id, or ADMIN_SCOPE for the environment's admin key (it has no row). */
  scope: string;
  key: string;
}

export type RecordState = 'in_progress' | 'done';

/** A record as read back: times in epoch milliseconds. */
export interface IdempotencyRow {
  fingerprint: string;
  state: RecordState;
  owner: string | null;
  leaseUntil: number;
  expiresAt: number;
  responseStatus: number | null;
  /** The stored answer's JSON text. */
  responseBody: string | null;
}

/** What a run writes when it claims a record. */
export interface Claim {
  fingerprint: string;
  /** Random id of this run: renew, complete and release only touch a record it still owns. */
  owner: string;
  now: number;
  leaseUntil: number;
  expiresAt: number;
}

const IN_PROGRESS: RecordState = 'in_progress';
const DONE: RecordState = 'done';

/**
 * The idempotency table. Every transition is one conditional statement, so the database decides
 * races between requests and between processes: the claim that changes a row wins, the others
 * read the row again and see the winner.
 */
export class IdempotencyStore {
  constructor(private readonly prisma: PrismaClient) {}

  /** INSERT … ON CONFLICT DO NOTHING: true when this call created the record. */
  async insert(slot: Slot, claim: Claim): Promise<boolean> {
    const { count } = await this.prisma.idempotencyRecord.createMany({
      data: [{ apiKeyId: slot.scope, key: slot.key, state: IN_PROGRESS, ...claimColumns(claim) }],
      skipDuplicates: true,
    });
    return count === 1;
  }

  async find(slot: Slot): Promise<IdempotencyRow | null> {
    const row = await this.prisma.idempotencyRecord.findUnique({
      where: { apiKeyId_key: { apiKeyId: slot.scope, key: slot.key } },
    });
    if (!row) return null;
    return {
      fingerprint: row.fingerprint,
      state: row.state === DONE ? DONE : IN_PROGRESS,
      owner: row.owner,
      leaseUntil: row.leaseUntil.getTime(),
      expiresAt: row.expiresAt.getTime(),
      responseStatus: row.responseStatus,
      responseBody: row.responseBody,
    };
  }

  /** An expired record counts as absent: replaced whole (new fingerprint, new 24 hours) if still expired. */
  async replaceExpired(slot: Slot, claim: Claim): Promise<boolean> {
    const { count } = await this.prisma.idempotencyRecord.updateMany({
      where: { apiKeyId: slot.scope, key: slot.key, expiresAt: { lte: new Date(claim.now) } },
      data: { state: IN_PROGRESS, responseStatus: null, responseBody: null, ...claimColumns(claim) },
    });
    return count === 1;
  }

  /**
   * A run whose process died left its record in progress: once the lease has run out, one new run
   * takes it over (the 24 hours still count from the first request).
   */
  async takeOver(slot: Slot, claim: Claim): Promise<boolean> {
    const { count } = await this.prisma.idempotencyRecord.updateMany({
      where: {
        apiKeyId: slot.scope,
        key: slot.key,
        fingerprint: claim.fingerprint,
        state: IN_PROGRESS,
        leaseUntil: { lt: new Date(claim.now) },
        expiresAt: { gt: new Date(claim.now) },
      },
      data: { owner: claim.owner, leaseUntil: new Date(claim.leaseUntil) },
    });
    return count === 1;
  }

  /** Extends the lease of a run still going; false when the record is no longer this run's. */
  async renew(slot: Slot, owner: string, leaseUntil: number): Promise<boolean> {
    const { count } = await this.prisma.idempotencyRecord.updateMany({
      where: { apiKeyId: slot.scope, key: slot.key, owner, state: IN_PROGRESS },
      data: { leaseUntil: new Date(leaseUntil) },
    });
    return count === 1;
  }

  /** Stores the answer; false when the record is no longer this run's (taken over or purged). */
  async complete(slot: Slot, owner: string, status: number, body: string): Promise<boolean> {
    const { count } = await this.prisma.idempotencyRecord.updateMany({
      where: { apiKeyId: slot.scope, key: slot.key, owner, state: IN_PROGRESS },
      data: { state: DONE, responseStatus: status, responseBody: body },
    });
    return count === 1;
  }

  /** Forgets the record, so the next request with the key runs for real. */
  async release(slot: Slot, owner: string): Promise<boolean> {
    const { count } = await this.prisma.idempotencyRecord.deleteMany({
      where: { apiKeyId: slot.scope, key: slot.key, owner, state: IN_PROGRESS },
    });
    return count === 1;
  }
}

function claimColumns(claim: Claim) {
  return {
    fingerprint: claim.fingerprint,
    owner: claim.owner,
    leaseUntil: new Date(claim.leaseUntil),
    createdAt: new Date(claim.now),
    expiresAt: new Date(claim.expiresAt),
  };
}
