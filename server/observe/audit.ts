import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { AuditEventView } from '../../shared/schemas/observe.ts';
import type { Clock } from '../clock.ts';
import type { Prisma, PrismaClient } from '../db/generated/client.ts';
import type { Result } from '../result.ts';

/**
 * The audit trail (docs/reference.md "Audit trail"): one event per administrative or connection
 * change, chained by hash so that a changed, removed or inserted event shows.
 */

/** Who made a change: an API key's id, `system` (the server itself, or TOOLGATE_ADMIN_KEY), or `oidc:<sub>`. */
export type Actor = string;

/** The change, as the caller of `appendAudit` names it (never a secret in `details`). */
export interface AuditChange {
  actor: Actor;
  /** `client.created`, `api_key.revoked`, `connection.granted`… (docs/reference.md). */
  action: string;
  /** The id of what changed (a client, key, app, redirect URI's client, connection). */
  target: string;
  details: Record<string, unknown>;
}

/** An event as stored and answered (its wire shape: shared/schemas/observe.ts). */
export type AuditEvent = AuditEventView;

/** The actor of a principal: its key id; the environment's admin key (no id) acts as `system`. */
export function actorOf(principal: { keyId: string | null }): Actor {
  return principal.keyId ?? 'system';
}

/**
 * hash = hex SHA-256 of the previous event's hash (hex; '' before the first) followed by the RFC
 * 8785 canonical JSON of the event without its hash. Canonical JSON (sorted keys, one spelling of
 * each number and string) is what makes the hash a function of the event's content alone, however
 * its JSON was written or stored.
 */
export function chainHash(previous: string, event: Omit<AuditEvent, 'hash'>): string {
  const canonical = canonicalize({
    id: event.id,
    at: event.at,
    actor: event.actor,
    action: event.action,
    target: event.target,
    details: event.details,
  });
  if (canonical === undefined) throw new TypeError('an audit event must be JSON');
  return createHash('sha256').update(previous).update(canonical).digest('hex');
}

type Tx = Prisma.TransactionClient;

/**
 * Appends one event within `tx`: it commits or rolls back with the change it records. The head row
 * is locked (FOR UPDATE) for the rest of the transaction, so appends from every server sharing
 * the database form one chain, one after another.
 */
export async function appendAuditIn(tx: Tx, clock: Clock, change: AuditChange): Promise<void> {
  const [head] = await tx.$queryRaw<{ seq: bigint; hash: string }[]>`
    SELECT seq, hash FROM audit_head WHERE id = 1 FOR UPDATE`;
  if (!head) throw new Error('audit_head has no row: the audit_trail migration did not run');
  const seq = head.seq + 1n;
  const at = new Date(clock.now());
  // The details as JSON would read them back: undefined members gone, dates as text.
  const details = JSON.parse(JSON.stringify(change.details)) as Record<string, unknown>;
  const event = { id: String(seq), at: at.toISOString(), ...change, details };
  const hash = chainHash(head.hash, event);
  await tx.auditEvent.create({
    data: {
      seq,
      at,
      actor: change.actor,
      action: change.action,
      target: change.target,
      details: canonicalize(details) as string,
      hash,
    },
    select: { seq: true },
  });
  await tx.$executeRaw`UPDATE audit_head SET seq = ${seq}, hash = ${hash} WHERE id = 1`;
}

/** What an audited change needs of the server: its database and clock. */
interface AuditDeps {
  db: { prisma: PrismaClient };
  clock: Clock;
}

/** The event of a change, given what the change answered (the actor is the caller's). */
export type EventOf<T> = (value: T) => { action: string; target: string; details?: Record<string, unknown> };

/**
 * Runs `change` in a transaction and, when it answers ok, appends its audit event in that same
 * transaction: an administrative change and its event commit together or not at all (a change
 * the trail does not show would defeat it; an event for a change that never happened would lie).
 * `change` must use `tx` only (on PGlite the transaction holds the one connection) and should
 * do slow work (hashing, compiling) before: the chain's head stays locked only from the append
 * to the commit, but the connection is held throughout.
 */
export async function auditedChange<T, E>(
  deps: AuditDeps,
  principal: { keyId: string | null },
  change: (tx: Tx) => Promise<Result<T, E>>,
  eventOf: EventOf<T>,
): Promise<Result<T, E>> {
  return deps.db.prisma.$transaction(async (tx) => {
    const outcome = await change(tx);
    if (outcome.ok) await appendEventIn(tx, deps, principal, eventOf(outcome.value));
    return outcome;
  });
}

/** Appends the event of a change made by `principal` within `tx` (see auditedChange). */
export function appendEventIn(
  tx: Tx,
  deps: { clock: Clock },
  principal: { keyId: string | null },
  event: ReturnType<EventOf<unknown>>,
): Promise<void> {
  return appendAuditIn(tx, deps.clock, {
    actor: actorOf(principal),
    action: event.action,
    target: event.target,
    details: event.details ?? {},
  });
}
