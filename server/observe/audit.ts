import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { Clock } from '../clock.ts';
import type { Prisma, PrismaClient } from '../db/generated/client.ts';

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

/** An event as stored and answered. */
export interface AuditEvent {
  id: string;
  at: string;
  actor: string;
  action: string;
  target: string;
  details: Record<string, unknown>;
  hash: string;
}

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

/** Appends one event in a transaction of its own (see appendAuditIn). */
export async function appendAudit(prisma: PrismaClient, clock: Clock, change: AuditChange): Promise<void> {
  await prisma.$transaction((tx) => appendAuditIn(tx, clock, change));
}

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

/** What `recordChange` needs of the server: its database and clock. */
interface AuditDeps {
  db: { prisma: PrismaClient };
  clock: Clock;
}

/**
 * The audit event of a change an authenticated caller made (an admin procedure, an agent's
 * disconnect), once the change is done.
 */
export function recordChange(
  deps: AuditDeps,
  principal: { keyId: string | null },
  action: string,
  target: string,
  details: Record<string, unknown> = {},
): Promise<void> {
  return appendAudit(deps.db.prisma, deps.clock, { actor: actorOf(principal), action, target, details });
}
