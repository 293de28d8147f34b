import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Migrates one PGlite template folder (and a PostgreSQL template database when
    // TEST_DATABASE_URL is set) once per run; test databases are cheap copies of them.
    globalSetup: ['test/support/global-setup.ts'],
    // PGlite and Prisma hold wasm instances and native handles: separate processes isolate them best.
    pool: 'forks',
    // A worker process runs file after file (isolate: false): a file no longer loads the server's
    // modules, Prisma and PGlite's WebAssembly again (test/proxy + test/catalog: 69 → 44 s of CPU,
    // module loading 52 → 12 s). Each file still makes its own servers and databases; no test may
    // rely on module state another file left (none does: the whole suite passes this way).
    isolate: false,
    // The machine has 2 cores and each PGlite is a whole PostgreSQL: keep few files in flight.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    teardownTimeout: 30_000,
  },
});
