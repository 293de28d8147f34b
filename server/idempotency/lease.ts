import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { IdempotencyStore, Slot } from './store.ts';

/**
 * The hold of one run on its in-progress record. While the run goes on, a timer extends the
 * lease, so only a run whose process died lets its lease run out. Renew, complete and release
 * are fenced by the owner id: a run that lost its record (taken over after a stall, or purged)
 * changes nothing.
 */
export class Lease {
  readonly #timer: NodeJS.Timeout;
  /** Renewals run one after another, and complete/release wait for the last one. */
  #renewal: Promise<void> = Promise.resolve();
  #held = true;

  constructor(
    private readonly store: IdempotencyStore,
    private readonly slot: Slot,
    private readonly owner: string,
    private readonly clock: Clock,
    private readonly timing: { leaseMs: number; renewEveryMs: number },
    private readonly log: Logger,
  ) {
    this.#timer = setInterval(() => {
      this.#renewal = this.#renewal.then(() => this.#renew());
    }, timing.renewEveryMs);
    this.#timer.unref();
  }

  /** Stores the answer for replays; false when the record was no longer this run's. */
  async complete(status: number, body: string): Promise<boolean> {
    await this.#end();
    return this.#settle('store', () => this.store.complete(this.slot, this.owner, status, body));
  }

  /** Deletes the record, so a retry with the key runs for real. */
  async release(): Promise<boolean> {
    await this.#end();
    return this.#settle('release', () => this.store.release(this.slot, this.owner));
  }

  async #renew(): Promise<void> {
    if (!this.#held) return;
    try {
      if (!(await this.store.renew(this.slot, this.owner, this.clock.now() + this.timing.leaseMs))) {
        this.#held = false;
        this.log.warn('idempotency lease lost while the call was running');
      }
    } catch (error) {
      this.log.warn({ err: error }, 'idempotency lease renewal failed');
    }
  }

  async #end(): Promise<void> {
    clearInterval(this.#timer);
    await this.#renewal;
  }

  /**
   * The caller gets its real answer even when this write fails: the record then stays in progress
   * until its lease runs out and a retry takes it over.
   */
  async #settle(action: string, write: () => Promise<boolean>): Promise<boolean> {
    try {
      const done = await write();
      if (!done) this.log.warn({ action }, 'idempotency record was no longer held by this call');
      return done;
    } catch (error) {
      this.log.error({ err: error, action }, 'idempotency record could not be written');
      return false;
    }
  }
}
