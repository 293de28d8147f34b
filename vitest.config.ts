import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Migrates one PGlite template folder (and a PostgreSQL template database when
    // TEST_DATABASE_URL is set) once per run; test databases are cheap copies of them.
    globalSetup: ['test/support/global-setup.ts'],
    // PGlite and Prisma hold wasm instances and native handles: separate processes isolate them best.
    pool: 'forks',
    // The machine has 2 cores and each PGlite is a whole PostgreSQL: keep few files in flight.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    teardownTimeout: 30_000,
  },
});
