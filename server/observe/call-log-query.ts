import type { ErrorBody } from '../../shared/errors.ts';
import type { CallView, ListCallsInput } from '../../shared/schemas/observe.ts';
import { Prisma, type PrismaClient } from '../db/generated/client.ts';
import { err, ok, type Result } from '../result.ts';
import type { Surface } from './call-log.ts';
import { badCursor, decodeCursor, encodeCursor, type KeysetPosition, pageOf } from './keyset.ts';

/** `GET /admin/calls` (docs/reference.md "Call log"): a page, or 400 for a cursor not of ours. */
export async function callsPage(
  prisma: PrismaClient,
  input: ListCallsInput,
): Promise<Result<{ calls: CallView[]; next_cursor?: string }, ErrorBody>> {
  const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
  if (after === null) return err(badCursor());
  const { calls, next } = await listCalls(prisma, {
    ...input,
    since: input.since === undefined ? undefined : new Date(input.since),
    until: input.until === undefined ? undefined : new Date(input.until),
    after,
  });
  return ok({ calls, ...(next ? { next_cursor: encodeCursor(next) } : {}) });
}

/** `GET /admin/calls` filters (docs/reference.md "Call log"); each is an exact match. */
export interface CallFilters {
  clientId?: string | undefined;
  userId?: string | undefined;
  appId?: string | undefined;
  toolId?: string | undefined;
  outcome?: string | undefined;
  /** at ≥ since. */
  since?: Date | undefined;
  /** at < until. */
  until?: Date | undefined;
  limit: number;
  /** Where the previous page ended: only older records follow. */
  after?: KeysetPosition | undefined;
}

interface Row {
  id: bigint;
  at: Date;
  duration_ms: number;
  surface: string;
  key_id: string | null;
  client_id: string;
  user_id: string | null;
  app_id: string | null;
  tool_id: string | null;
  outcome: string;
  status: number;
  upstream_status: number | null;
  idempotent_replay: boolean;
  request_id: string;
}

/**
 * A page of the call log, newest first, and where the next one starts. Raw SQL for the keyset
 * condition: PostgreSQL reads the row comparison `(at, id) < (…)` as one range of an index
 * ending in (at, id) — each filter has one (schema.prisma) — where Prisma's OR of two conditions
 * made it sort the whole filtered set on a million records.
 */
export async function listCalls(
  prisma: PrismaClient,
  filters: CallFilters,
): Promise<{ calls: CallView[]; next?: KeysetPosition }> {
  const conditions: Prisma.Sql[] = [];
  const equal = (column: string, value: string | undefined) => {
    if (value !== undefined) conditions.push(Prisma.sql`${Prisma.raw(column)} = ${value}`);
  };
  equal('client_id', filters.clientId);
  equal('user_id', filters.userId);
  equal('app_id', filters.appId);
  equal('tool_id', filters.toolId);
  equal('outcome', filters.outcome);
  if (filters.since) conditions.push(Prisma.sql`at >= ${filters.since}`);
  if (filters.until) conditions.push(Prisma.sql`at < ${filters.until}`);
  if (filters.after)
    conditions.push(Prisma.sql`(at, id) < (${filters.after.at}, ${BigInt(filters.after.id)})`);
  const where = conditions.length > 0 ? Prisma.sql`WHERE ${Prisma.join(conditions, ' AND ')}` : Prisma.empty;
  const rows = await prisma.$queryRaw<Row[]>`
    SELECT id, at, duration_ms, surface, key_id, client_id, user_id, app_id, tool_id, outcome, status,
           upstream_status, idempotent_replay, request_id
    FROM call_log ${where}
    ORDER BY at DESC, id DESC
    LIMIT ${filters.limit + 1}`;
  const page = pageOf(rows, filters.limit, (row) => ({ at: row.at, id: String(row.id) }));
  return { calls: page.items.map(toView), ...(page.next ? { next: page.next } : {}) };
}

function toView(row: Row): CallView {
  return {
    id: String(row.id),
    at: row.at.toISOString(),
    durationMs: row.duration_ms,
    surface: row.surface as Surface,
    keyId: row.key_id,
    clientId: row.client_id,
    userId: row.user_id,
    appId: row.app_id,
    toolId: row.tool_id,
    outcome: row.outcome,
    status: row.status,
    upstreamStatus: row.upstream_status,
    idempotentReplay: row.idempotent_replay,
    requestId: row.request_id,
  };
}

/**
 * Deletes records older than `cutoff`, a batch per statement. Every server runs it; SKIP LOCKED
 * gives two servers purging at once disjoint rows, so none waits on another or deletes twice.
 */
export async function purgeCallLog(
  prisma: PrismaClient,
  cutoff: Date,
  options: { batchSize: number; maxBatches: number },
): Promise<number> {
  let total = 0;
  for (let batch = 0; batch < options.maxBatches; batch += 1) {
    const deleted = await prisma.$executeRaw`
      DELETE FROM call_log WHERE id IN (
        SELECT id FROM call_log WHERE at < ${cutoff}
        LIMIT ${options.batchSize}
        FOR UPDATE SKIP LOCKED
      )`;
    total += deleted;
    if (deleted < options.batchSize) break;
  }
  return total;
}
