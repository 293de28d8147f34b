// `npm run mutate [-- <source file> … [--tests <test glob> …]]`: Stryker over the files named
// (default: stryker.config.mjs's list), running the tests named (default: all of them). Naming the
// tests that guard a file keeps a run to minutes on two cores, e.g.
//   npm run mutate -- server/oauth/refresh.ts --tests 'test/oauth/refresh*.test.ts'
import { spawnSync } from 'node:child_process';

const args = process.argv.slice(2);
const split = args.indexOf('--tests');
const files = split === -1 ? args : args.slice(0, split);
const tests = split === -1 ? [] : args.slice(split + 1);
const { status } = spawnSync(
  'npx',
  ['stryker', 'run', ...(files.length > 0 ? ['--mutate', files.join(',')] : [])],
  // vitest.mutate.config.ts reads the test globs from here.
  { stdio: 'inherit', env: { ...process.env, MUTATE_TESTS: tests.join(',') } },
);
process.exit(status ?? 1);
