/**
 * A counter of this process's grant writes, so that cached grants (grant-cache.ts) are dropped the
 * moment any grant changes here. Process-wide on purpose: two servers in one process (tests) both
 * see every write, which only makes their caches re-read sooner. Its own module so that grants.ts
 * (the writer) and grant-cache.ts (the reader) do not import each other.
 */
let generation = 0;

/** Called by every grant write of this process, before and after the statement. */
export function grantsChanged(): void {
  generation += 1;
}

export function grantGeneration(): number {
  return generation;
}
