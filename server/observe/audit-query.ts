import type { ErrorBody } from '../../shared/errors.ts';
import type { ListAuditInput } from '../../shared/schemas/observe.ts';
import { Prisma, type PrismaClient } from '../db/generated/client.ts';
import { err, ok, type Result } from '../result.ts';
import { type AuditEvent, chainHash } from './audit.ts';
import { badCursor, decodeCursor, encodeCursor, pageOf } from './keyset.ts';

interface Row {
  seq: bigint;
  at: Date;
  actor: string;
  action: string;
  target: string;
  details: string;
  hash: string;
}

function toEvent(row: Row): AuditEvent {
  return {
    id: String(row.seq),
    at: row.at.toISOString(),
    actor: row.actor,
    action: row.action,
    target: row.target,
    details: JSON.parse(row.details) as Record<string, unknown>,
    hash: row.hash,
  };
}

/**
 * `GET /admin/audit` (docs/reference.md "Audit trail"): events newest first (chain order), filtered
 * by exact action and actor and by time; a cursor names the last event of the previous page.
 */
export async function auditPage(
  prisma: PrismaClient,
  input: ListAuditInput,
): Promise<Result<{ events: AuditEvent[]; next_cursor?: string }, ErrorBody>> {
  const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
  if (after === null) return err(badCursor());
  const conditions: Prisma.Sql[] = [];
  if (input.action !== undefined) conditions.push(Prisma.sql`action = ${input.action}`);
  if (input.actor !== undefined) conditions.push(Prisma.sql`actor = ${input.actor}`);
  if (input.since !== undefined) conditions.push(Prisma.sql`at >= ${new Date(input.since)}`);
  if (input.until !== undefined) conditions.push(Prisma.sql`at < ${new Date(input.until)}`);
  if (after) conditions.push(Prisma.sql`seq < ${BigInt(after.id)}`);
  const where = conditions.length > 0 ? Prisma.sql`WHERE ${Prisma.join(conditions, ' AND ')}` : Prisma.empty;
  const rows = await prisma.$queryRaw<Row[]>`
    SELECT seq, at, actor, action, target, details, hash FROM audit_events ${where}
    ORDER BY seq DESC LIMIT ${input.limit + 1}`;
  const page = pageOf(rows, input.limit, (row) => ({ at: row.at, id: String(row.seq) }));
  return ok({
    events: page.items.map(toEvent),
    ...(page.next ? { next_cursor: encodeCursor(page.next) } : {}),
  });
}

/** Whether the row's hash is the chain hash of its content after `previous` (details that are no JSON are not). */
function follows(previous: string, row: Row): boolean {
  try {
    return chainHash(previous, toEvent(row)) === row.hash;
  } catch {
    return false;
  }
}

/** Events read per query while verifying: the whole chain is never held in memory. */
const VERIFY_BATCH = 1_000;

export interface Verification {
  ok: boolean;
  /** Events checked, the bad one included. */
  checked: number;
  /** The first event whose hash does not follow from its content and its predecessor's hash. */
  firstBadId?: string;
}

/**
 * `GET /admin/audit/verify`: walks the chain from its first event, recomputing every hash. The
 * first event that is altered (content or hash), out of place (its seq does not follow), or
 * follows a removed one is named; the last event must be the one the head names, or the last
 * events were removed (the missing one's id is named), or one was added past it.
 *
 * Servers may append while this runs. So the walk goes up to the head as read before it (an event
 * and the head's move commit together: every event the head names is there to read), then, if
 * events lie past that head, reads the head again and walks on. Reading the head only after the
 * walk would take an event appended meanwhile for one removed.
 */
export async function verifyAudit(prisma: PrismaClient): Promise<Verification> {
  let previous = '';
  let expected = 1n;
  let checked = 0;
  let head = await readHead(prisma);
  for (;;) {
    for (;;) {
      const rows = await prisma.$queryRaw<Row[]>`
        SELECT seq, at, actor, action, target, details, hash FROM audit_events
        WHERE seq >= ${expected} AND seq <= ${head.seq} ORDER BY seq LIMIT ${VERIFY_BATCH}`;
      for (const row of rows) {
        checked += 1;
        if (row.seq !== expected || !follows(previous, row))
          return { ok: false, checked, firstBadId: String(expected) };
        previous = row.hash;
        expected += 1n;
      }
      if (rows.length < VERIFY_BATCH) break;
    }
    if (head.seq !== expected - 1n || head.hash !== previous)
      return { ok: false, checked, firstBadId: String(expected) };
    const [past] = await prisma.$queryRaw<{ seq: bigint }[]>`
      SELECT seq FROM audit_events WHERE seq > ${head.seq} ORDER BY seq LIMIT 1`;
    if (!past) return { ok: true, checked };
    const next = await readHead(prisma);
    // An event past a head that has not moved: written around the chain, not appended to it.
    if (next.seq === head.seq) return { ok: false, checked: checked + 1, firstBadId: String(expected) };
    head = next;
  }
}

async function readHead(prisma: PrismaClient): Promise<{ seq: bigint; hash: string }> {
  const [head] = await prisma.$queryRaw<{ seq: bigint; hash: string }[]>`
    SELECT seq, hash FROM audit_head WHERE id = 1`;
  if (!head) throw new Error('audit_head has no row: the audit_trail migration did not run');
  return head;
}
