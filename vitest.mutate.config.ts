// The test configuration of `npm run mutate` (stryker.config.mjs): the suite's own, with the test
// files replaced by MUTATE_TESTS (comma-separated globs) when scripts/mutate.mjs was given some.
// (Not mergeConfig: it would append the globs to the suite's own instead of replacing them.)
import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

const tests = process.env.MUTATE_TESTS?.split(',').filter(Boolean) ?? [];

export default defineConfig({
  ...base,
  // Isolated files, as the runs in BENCHMARKS.md were made: Stryker switches mutants inside the
  // worker, and a file must not see module state left by the previous one under another mutant.
  test: { ...base.test, isolate: true, ...(tests.length > 0 ? { include: tests } : {}) },
});
