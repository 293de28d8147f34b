import type { Logger } from 'pino';
import type { PrismaClient } from '../db/generated/client.ts';

export interface PurgeOptions {
  /** Rows per DELETE: each statement stays short, so it never holds many locks at once. */
  batchSize: number;
  /** Statements per pass, so one pass has an end even when rows expire faster than it deletes. */
  maxBatches: number;
}

/**
 * Deletes records whose 24 hours are over, in batches. SKIP LOCKED lets servers sharing the
 * database purge at once without waiting on each other or on a request that is replacing an
 * expired record; the outer condition is re-checked on the row actually deleted.
 */
export async function purgeExpired(
  prisma: PrismaClient,
  now: number,
  options: PurgeOptions,
): Promise<number> {
  const cutoff = new Date(now);
  let total = 0;
  for (let batch = 0; batch < options.maxBatches; batch += 1) {
    const deleted = await prisma.$executeRaw`
      DELETE FROM idempotency_records
      WHERE (api_key_id, key) IN (
        SELECT api_key_id, key FROM idempotency_records
        WHERE expires_at <= ${cutoff}
        LIMIT ${options.batchSize}
        FOR UPDATE SKIP LOCKED
      ) AND expires_at <= ${cutoff}`;
    total += deleted;
    if (deleted < options.batchSize) break;
  }
  return total;
}

export interface Purger {
  /** Stops the timer and waits for a pass in flight, so the database can close after it. */
  stop(): Promise<void>;
}

/**
 * Runs `purge` every `intervalMs` off the request path. The timer is unref'd (it never keeps the
 * process alive) and re-armed only after a pass ends, so passes never overlap.
 */
export function startPurger(
  purge: () => Promise<number>,
  intervalMs: number,
  logger: Logger,
  /** What is purged, for the log lines ("expired idempotency records"). */
  what = 'expired idempotency records',
): Purger {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(tick, intervalMs);
    timer.unref();
  };
  const tick = () => {
    const started = performance.now();
    running = purge()
      .then((deleted) => {
        if (deleted > 0)
          logger.info({ deleted, ms: Math.round(performance.now() - started) }, `purged ${what}`);
      })
      .catch((error: unknown) => logger.warn({ err: error }, `purging ${what} failed; retrying later`))
      .finally(() => {
        running = undefined;
        schedule();
      });
  };

  schedule();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
