import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import { LIMITS } from '../config.ts';
import type { PrismaClient } from '../db/generated/client.ts';
import { type Purger, startPurger } from '../idempotency/purge.ts';
import { purgeCallLog } from './call-log-query.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/** One purge pass: records older than CALL_LOG_DAYS go (all of them at 0, which keeps no log). */
export function purgeOldCalls(prisma: PrismaClient, days: number, clock: Clock): Promise<number> {
  return purgeCallLog(prisma, new Date(clock.now() - days * DAY_MS), { batchSize: 5_000, maxBatches: 200 });
}

/**
 * Every server purges on its own timer, off the request path; two servers purging at once take
 * disjoint rows (SKIP LOCKED), so the work is never done twice and no server waits for another.
 */
export function startCallLogPurge(prisma: PrismaClient, days: number, clock: Clock, logger: Logger): Purger {
  return startPurger(
    () => purgeOldCalls(prisma, days, clock),
    LIMITS.callLogPurgeIntervalMs,
    logger,
    'old call-log records',
  );
}
