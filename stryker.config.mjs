// Mutation testing (issue 29): `npm run mutate` on the cores, or `npm run mutate -- <file> [<file>…]`.
// Not part of `npm test`: a run takes minutes per file. Per-test coverage makes each mutant run only
// the tests that reach its line. With TEST_DATABASE_URL set, the PostgreSQL fault suites join in.
//
// Surviving mutants that no test can kill, argued rather than excluded:
// - server/auth/authenticate.ts, BEARER's `{1,512}` bound: keyIdOf's exact key format already
//   refuses any longer key before argon2, so the bound is a second fence with the same answer.
// - server/calls/call-tool.ts, `principal.keyId ?? 'admin'`: the environment's admin key is refused
//   on agent routes before the rate limit, and no key id can equal any constant put there.
// - server/catalog/request.ts, the `url.hash === ''`, `username`/`password`/`protocol`/`host`
//   conjuncts of the final containment check: the template and every value are percent-encoded
//   before the URL is parsed, so '#', '@', ':' and '/' never reach the parser raw and only the
//   path can move; the conjuncts stay as the last line of defence. Also `parameter.in !== 'path'`
//   beside `!parameter.required` (path parameters are always required), and the early
//   `if (issues.length > 0)` return (the later one answers the same issues).
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutate.config.ts' },
  coverageAnalysis: 'perTest',
  mutate: [
    'server/oauth/refresh.ts',
    'server/catalog/request.ts',
    'server/idempotency/service.ts',
    'server/calls/call-tool.ts',
    'server/auth/authenticate.ts',
  ],
  // Two cores: one mutant at a time per core.
  concurrency: 2,
  timeoutMS: 60_000,
  // The first run of the named tests, with coverage per test; generous for a loaded machine.
  dryRunTimeoutMinutes: 30,
  reporters: ['clear-text', 'progress', 'html'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  thresholds: { high: 90, low: 85, break: null },
};
