// Mutation testing (issue 29): `npm run mutate` on the cores, or `npm run mutate -- <file> [<file>…]`.
// Not part of `npm test`: a run takes minutes per file. Per-test coverage makes each mutant run only
// the tests that reach its line. With TEST_DATABASE_URL set, the PostgreSQL fault suites join in.
//
// Surviving mutants that no test can kill, argued rather than excluded:
// - server/auth/authenticate.ts, BEARER's `{1,512}` bound: keyIdOf's exact key format already
//   refuses any longer key before argon2, so the bound is a second fence with the same answer.
// - server/auth/authenticate.ts, `refusedAt !== undefined` made `true` (~112): `now - undefined`
//   is NaN, and `NaN < …` is false, so an unknown key goes on to verification either way.
// - server/auth/authenticate.ts, `if (address)` in #failureSubjects made `true` (~158): without an
//   address the failures land under an `undefined` subject that #overFailureLimit never reads (it
//   consults the address limiters only when there is an address), so no answer changes.
// - server/auth/authenticate.ts, the `.catch` of the last_used_at write (~202: its handler made
//   `() => undefined`, its log fields and message): not equivalent, a log line only. The write is
//   bookkeeping nobody awaits; making it fail needs the key row gone between the read and the
//   write, a race a test cannot set up without a mock. Unguarded by choice.
// - server/idempotency/service.ts (run on test/idempotency/service.test.ts alone, PGlite):
//   - the replay cache: `if (cached)` made `false` (~129) and the remember after a stored answer
//     emptied (~106): speed only, the database row answers the same replay.
//   - the done-row conjuncts (~154, six mutants): the store writes state 'done', status and body
//     in one update, so a row has a status and a body exactly when it is done.
//   - `row.leaseUntil >= now` made `false` or `>` (~164): the store's takeOver is conditional on
//     an expired lease, so a live one loses the takeover and the rounds end in in_progress alike.
//   - the takeover's log message (~166) and ADMIN_SCOPE's text (~16: any text no key id can be
//     serves, though rows stored under the old one would be orphaned): not equivalent, unguarded.
//   - `now + leaseMs` made `-` (~135): not equivalent (a fresh claim's lease would start expired
//     until the first renewal); the proxy and two-server suites, not this unit test, hold it.
// - server/calls/call-tool.ts, `principal.keyId ?? 'admin'`: the environment's admin key is refused
//   on agent routes before the rate limit, and no key id can equal any constant put there.
// - server/calls/call-tool.ts (run with test/calls/call-tool, test/metrics/metrics,
//   test/observe/tracing and call-log, PGlite; line numbers of this commit):
//   - `if (!tracer)` made `false` (~102): inSpan without a tracer runs the call with no span, the
//     very thing the early return does.
//   - `span?.` made `span.` (~111, ~113, ~114): in this branch the tracer exists, and inSpan hands
//     a tracer's span, never undefined; the `?.` is for inSpan's type, which allows no tracer.
//   - the report's initial `outcome: 'ok'` (~142): overwritten from the outcome before anything
//     reads the report (metrics, call log, log line); runCall fills in only the other fields.
//   - redactFailure's `seen.size === 0` made `false` (~236): with no secret injected the Redactor
//     has nothing to replace, and its excerpt of a body already cut to 64 KiB is the body itself:
//     a shortcut, the same answer. (The guard's other five mutants are killed by
//     test/calls/relayed-bodies.test.ts, which the run names since 2026-11-28.)
// - server/catalog/request.ts (line numbers of this commit):
//   - the `url.hash === ''`, `username`/`password`/`protocol`/`host` conjuncts of the final
//     containment check (~134–139): the template and every value are percent-encoded before the
//     URL is parsed, so '#', '@', ':' and '/' never reach the parser raw and only the path can move;
//     the conjuncts stay as the last line of defence. Of its last conjunct (~141), `prefix === ''`
//     made `false` or another string: with an empty prefix, `startsWith('/')` holds for every parsed
//     pathname, so both answer alike.
//   - `parameter.in !== 'path'` beside `!parameter.required` (~77, made `true` or `!== ""`): path
//     parameters are always required.
//   - the early `if (issues.length > 0)` return (~87) and `!part || !given.has(part)` made `&&`
//     (~186): a placeholder whose parameter is defined but not given is a missing required path
//     parameter; each of the two fences answers it alone (with the same issues), so either can go.
//   - `ok = false` after a path segment problem (~197) made `true`: the problem was recorded, and
//     the build answers recorded issues before it looks at the path.
//   - `expanded.includes('/')` made `includes('')` (~195): splitting a value without '/' at '/'
//     gives the value itself, so both branches check the same segment.
//   - queryPairs' shortcut (~157) made `false` or `length < 1`: without it the general path builds
//     the same empty list, and a parsed URL's search is never a lone '?' (length 1).
//   - the caches: `if (!segments)` (~221), `if (base === undefined)` (~239) made `true` (parse every
//     time) and the 1,000-entry bound's clear (~240): speed and memory only, the same answers.
//   - the template placeholder pattern's `^`/`$` (~224): it runs on the parts of a split at
//     `(\{[^{}]*\})`, so a part is either exactly a placeholder or text holding none.
//   - parseUrl's `catch` returning undefined instead of null (~260): the base URL's `!base` treats
//     both alike, and the built URL (a parsed origin plus encoded text) always parses.
//   - `pair.split('=')[0] ?? ''` (~161): split always returns at least one element.
// - server/oauth/refresh.ts (line numbers of this commit; run with the PostgreSQL fault suites):
//   - `if (!written)` made `true` (~157): a save that did write reads the grant back, finds its own
//     token and logs nothing: one extra read, the same answer and log.
//   - `stored?.access_token !== …` made `true` (~161): not equivalent, a log line only. It differs
//     only when the first save committed and just its acknowledgement was lost, a window no test can
//     open (the connection would have to die between the commit and its answer). Unguarded.
//   - `failure.kind === 'oauth_error'` made `true` in the metric's `reauth` (~209): the other
//     failures carry no `error`, and `REAUTH_ERRORS.has(undefined)` is false.
//   - `failure.kind === 'oauth_error'` made `true` in the log's `oauthError` (~216): other failures
//     would log `oauthError: undefined`, which the JSON line leaves out.
//   - `case 'timeout'` (~236–237, four mutants): not equivalent; the provider's own time-out is
//     max(LIMITS.refreshTimeoutMs = 60 s, UPSTREAM_TIMEOUT_MS), so a test would wait a minute or
//     more (the call's own 504 at its time-out is tested). Unguarded by choice.
//   - `failure.kind === 'unreachable'` made `true` in the log's `cause` (~218): the other failures
//     carry no `code`, and `cause: undefined` is left out of the JSON line like `oauthError` above.
//   - `parseScope(fresh.scope, [])`'s fallback made another list (~244): parseScope reads its
//     fallback only when the scope is undefined, and that case takes the other branch.
//   - the interactive transaction's bounds `{ maxWait, timeout }` (~258: emptied, or `+` made `-`
//     or `/`, four mutants): not equivalent; they matter only past Prisma's defaults (2 s to get
//     a connection, 5 s in all), i.e. a provider slower than 5 s. Even then the answer is kept (the
//     lost transaction sends it down the save-anew path, which is tested): a test would wait over
//     5 s to see a warning. Unguarded by choice.
// - server/signin/tokens.ts (line numbers of this commit; run with test/signin/protocol, cluster,
//   purge and tokens, PGlite):
//   - the `isSecretOf` shortcuts before a lookup: the code's (~97) and the refresh token's (~143)
//     made `false`, and revoke's (~224: made `false`, one `!` dropped, or the kind made "") — a
//     value not of our shape hashes to no stored row, so the lookup answers what the shortcut did
//     (invalid_grant with the same description; revoke's 200). One query saved, the same answer.
//   - `if (row.grantId)` made `true` for a used code (~120): a code's `usedAt` and `grantId` are
//     written in one transaction, so a used code always names its grant.
//   - the relation selects made `grant: {}` (~151, ~227): Prisma then selects every scalar of the
//     grant, a superset of the fields read.
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
