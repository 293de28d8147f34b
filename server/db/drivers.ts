// The database drivers, each loaded once per process and only when chosen. main.ts starts loading
// the chosen one (preloadDriver) before it loads the rest of the server, and openDatabase takes the
// same promise: the reads of the driver's files and the compilation of PGlite's WebAssembly (9 MB,
// compiled on V8's background threads) then run while the main thread loads the server's modules,
// instead of after them (issue 23, item 13). Nothing here opens a database: a start still binds its
// port and checks its KMS settings before any folder or connection is touched.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import type { PrismaPGlite } from 'pglite-prisma-adapter';
import { readMigrations } from './migrate.ts';

export interface PgliteDriver {
  PGlite: typeof PGlite;
  PrismaPGlite: typeof PrismaPGlite;
  /** PGlite's pglite.wasm, compiled: PGlite.create's `pgliteWasmModule`. */
  wasmModule: WebAssembly.Module;
}

export interface PostgresDriver {
  pg: typeof import('pg').default;
  PrismaPg: typeof import('@prisma/adapter-pg').PrismaPg;
}

/** V8's asynchronous WebAssembly compiler: Node has it, the ES2023 lib this project checks against does not. */
const wasm = (
  globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<WebAssembly.Module> } }
).WebAssembly;

let pglite: Promise<PgliteDriver> | undefined;
let postgres: Promise<PostgresDriver> | undefined;

export function loadPglite(): Promise<PgliteDriver> {
  pglite ??= (async () => {
    // The file PGlite itself would read, beside its own modules (pglite.wasm in its dist folder).
    const dist = path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
    const [{ PGlite }, { PrismaPGlite }, wasmModule] = await Promise.all([
      import('@electric-sql/pglite'),
      import('pglite-prisma-adapter'),
      readFile(path.join(dist, 'pglite.wasm')).then((bytes) => wasm.compile(bytes)),
    ]);
    return { PGlite, PrismaPGlite, wasmModule };
  })();
  // A failed load is not kept: the next open tries again.
  pglite.catch(() => {
    pglite = undefined;
  });
  return pglite;
}

export function loadPostgres(): Promise<PostgresDriver> {
  postgres ??= Promise.all([import('pg'), import('@prisma/adapter-pg')]).then(
    ([{ default: pg }, { PrismaPg }]) => ({ pg, PrismaPg }),
  );
  postgres.catch(() => {
    postgres = undefined;
  });
  return postgres;
}

/**
 * Starts loading what opening DATABASE_URL will need: the driver it names, if it names one, and
 * the migration files. openDatabase reports a bad URL or a load that failed, so a failure here is
 * left for it (and never unhandled).
 */
export function preloadDatabase(url: string): void {
  const driver = url.startsWith('pglite:')
    ? loadPglite()
    : url.startsWith('postgres://') || url.startsWith('postgresql://')
      ? loadPostgres()
      : undefined;
  driver?.catch(() => {});
  readMigrations().catch(() => {});
}
