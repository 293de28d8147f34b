/**
 * A counter of this process's grant writes, so that cached grants (grant-cache.ts) are dropped the
 * moment any grant changes here. Process-wide on purpose: two servers in one process (tests) both
 * see every write, which only makes their caches re-read sooner. Its own module so that grants.ts
 * (the writer) and grant-cache.ts (the reader) do not import each other.
 */
let generation = 0;

/**
 * Runs one grant write, counted before it starts and after it ends (also when it fails): a cached
 * read that overlapped it is never kept.
 */
export async function writingGrants<T>(write: () => Promise<T>): Promise<T> {
  generation += 1;
  try {
    return await write();
  } finally {
    generation += 1;
  }
}

export function grantGeneration(): number {
  return generation;
}
