/**
 * Concurrent calls for the same key share one run of the work: the first caller starts it, the
 * others get the same promise, and the key is forgotten as soon as the work settles (so a failure
 * is never cached: the next call tries again). One per use — API-key verification, data-key
 * unwraps, OAuth refreshes, app loading — each built with the object that owns it, never at
 * module level, so two servers in one process share nothing.
 *
 * @example
 * const loads = new SingleFlight<string, App>();
 * const app = await loads.run(appId, () => loadApp(appId));
 */
export class SingleFlight<K, V> {
  readonly #running = new Map<K, Promise<V>>();

  run(key: K, work: () => Promise<V>): Promise<V> {
    const running = this.#running.get(key);
    if (running) return running;
    const promise = work().finally(() => this.#running.delete(key));
    this.#running.set(key, promise);
    return promise;
  }

  /** true while a run for `key` is in flight (a caller may join it without its own admission). */
  has(key: K): boolean {
    return this.#running.has(key);
  }

  /** Settles when every run now in flight has settled (a server closing lets them finish). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#running.values()]);
  }

  /** How many distinct keys are in flight (for tests and metrics). */
  get size(): number {
    return this.#running.size;
  }
}
