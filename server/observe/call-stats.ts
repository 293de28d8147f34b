import type { CallStats } from '../../shared/schemas/admin.ts';
import { Prisma, type PrismaClient } from '../db/generated/client.ts';

/**
 * What the web console's overview draws (GET /admin/calls/stats): over the last `minutes` minutes
 * of the call log, the calls of each minute by outcome, the p50 and p99 duration, and the errors
 * most often answered. Two aggregate queries in the database, served by the call log's `(at, id)`
 * index (or `(client_id, at, id)`, `(app_id, at, id)` with a filter): however many calls the
 * window holds, the page receives at most one row per minute and outcome.
 */

export interface CallStatsInput {
  minutes: number;
  clientId?: string;
  appId?: string;
}

const MINUTE_MS = 60_000;
/** How many error outcomes the overview lists (callStatsOutput in shared/schemas/admin.ts says so). */
const TOP_ERRORS = 8;

export async function callStats(
  prisma: PrismaClient,
  now: number,
  input: CallStatsInput,
): Promise<CallStats> {
  const first = Math.floor(now / MINUTE_MS) * MINUTE_MS - (input.minutes - 1) * MINUTE_MS;
  const since = new Date(first);
  const until = new Date(now);
  const conditions = [Prisma.sql`at >= ${since}`, Prisma.sql`at <= ${until}`];
  if (input.clientId !== undefined) conditions.push(Prisma.sql`client_id = ${input.clientId}`);
  if (input.appId !== undefined) conditions.push(Prisma.sql`app_id = ${input.appId}`);
  const where = Prisma.join(conditions, ' AND ');

  const [buckets, [summary]] = await Promise.all([
    prisma.$queryRaw<Array<{ minute: Date; outcome: string; n: number }>>`
      SELECT date_trunc('minute', at) AS minute, outcome, count(*)::int AS n
      FROM call_log WHERE ${where}
      GROUP BY 1, 2`,
    prisma.$queryRaw<Array<{ total: number; errors: number; p50: number | null; p99: number | null }>>`
      SELECT count(*)::int AS total,
             (count(*) FILTER (WHERE outcome <> 'ok'))::int AS errors,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) AS p50,
             percentile_cont(0.99) WITHIN GROUP (ORDER BY duration_ms) AS p99
      FROM call_log WHERE ${where}`,
  ]);

  const minutes = Array.from({ length: input.minutes }, (_, i) => ({
    at: new Date(first + i * MINUTE_MS).toISOString(),
    counts: {} as Record<string, number>,
  }));
  const errorTotals = new Map<string, number>();
  for (const { minute, outcome, n } of buckets) {
    const slot = minutes[Math.round((minute.getTime() - first) / MINUTE_MS)];
    if (slot) slot.counts[outcome] = n;
    if (outcome !== 'ok') errorTotals.set(outcome, (errorTotals.get(outcome) ?? 0) + n);
  }
  const topErrors = [...errorTotals.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, TOP_ERRORS)
    .map(([outcome, count]) => ({ outcome, count }));
  return {
    since: since.toISOString(),
    until: until.toISOString(),
    total: summary?.total ?? 0,
    errors: summary?.errors ?? 0,
    p50Ms: summary?.p50 ?? null,
    p99Ms: summary?.p99 ?? null,
    minutes,
    topErrors,
  };
}
