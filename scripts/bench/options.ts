/** `npm run bench` options: argv `--name=value`, or the environment variable named in HELP. */

/** What `npm run bench -- --help` prints: the options of scripts/bench.ts. */
export const HELP = `npm run bench [-- --name=value …]: throughput and latency of POST /proxyV2 (and its oauth2 and
MCP variants) against a bare proxy and the upstream itself, then start-up times; see BENCHMARKS.md.

  --connections=10   [BENCH_CONNECTIONS]  concurrent connections of every load
  --duration=10      [BENCH_DURATION]     seconds measured per target
  --warmup=3         [BENCH_WARMUP]       seconds of unmeasured load before each measurement
  --postgres=URL     [BENCH_POSTGRES_URL] server to create the bench database on
                     (default postgresql://postgres@127.0.0.1:5432/postgres; \`off\` skips it)
  --rounds=1         [BENCH_ROUNDS]       measure every target this many times, interleaved, and
                                          report medians (steadier on a shared machine)
  --no-fetch-proxy                        skip the bare proxy over fetch (b')
  --no-single                             skip the second pass with 1 connection (latency without
                                          queueing: at most 5 s measured, 1 s warm-up)
  --profile          [BENCH_PROFILE=1]    afterwards, load toolgate (PGlite) under \`node --cpu-prof\`
                                          and summarize where its CPU goes
  --profile-only                          only the profile run (with the upstream)
  --profile-target=c [BENCH_PROFILE_TARGET] what the profile run loads: c (/proxyV2, auth none),
                                          c-oauth (warm grant) or c-mcp (/mcp tools/call)
  --startups=5       [BENCH_STARTUPS]     start-up section: starts measured per case (0 skips it)
  --startup-only                          only the start-up section (scripts/bench/startup.ts)
  --bundle=DIR       [BENCH_BUNDLE]       run this built dist/server folder instead of building one
  --help                                  print this and stop
`;

export interface Options {
  connections: number;
  duration: number;
  warmup: number;
  postgres: string | null;
  fetchProxy: boolean;
  single: boolean;
  rounds: number;
  profile: boolean;
  profileOnly: boolean;
  profileTarget: 'c' | 'c-oauth' | 'c-mcp';
  startups: number;
  startupOnly: boolean;
  /** A built dist/server folder to run instead of building one (A/B runs against another build). */
  bundle: string | null;
  /** Print the options and stop. */
  help: boolean;
}

export function parseOptions(argv: string[], env: NodeJS.ProcessEnv): Options {
  const args = new Map<string, string>();
  for (const arg of argv) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!m) throw new Error(`unknown argument ${arg}`);
    args.set(m[1] as string, m[2] ?? 'true');
  }
  const known = [
    'connections',
    'duration',
    'warmup',
    'postgres',
    'no-fetch-proxy',
    'no-single',
    'rounds',
    'profile',
    'profile-only',
    'profile-target',
    'startups',
    'startup-only',
    'bundle',
    'help',
  ];
  for (const name of args.keys()) if (!known.includes(name)) throw new Error(`unknown option --${name}`);
  const num = (name: string, envName: string, fallback: number, min: number, max: number) => {
    const raw = args.get(name) ?? env[envName];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min || value > max)
      throw new Error(`--${name} must be a number from ${min} to ${max}`);
    return value;
  };
  const postgres =
    args.get('postgres') ?? env.BENCH_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
  const profileOnly = args.has('profile-only');
  return {
    connections: Math.round(num('connections', 'BENCH_CONNECTIONS', 10, 1, 1000)),
    duration: num('duration', 'BENCH_DURATION', 10, 1, 600),
    warmup: num('warmup', 'BENCH_WARMUP', 3, 0, 120),
    postgres: postgres === 'off' ? null : postgres,
    fetchProxy: !args.has('no-fetch-proxy'),
    single: !args.has('no-single'),
    rounds: Math.round(num('rounds', 'BENCH_ROUNDS', 1, 1, 20)),
    profile: profileOnly || args.has('profile') || env.BENCH_PROFILE === '1',
    profileOnly,
    profileTarget: profileTargetOf(args.get('profile-target') ?? env.BENCH_PROFILE_TARGET ?? 'c'),
    startups: Math.round(num('startups', 'BENCH_STARTUPS', 5, 0, 50)),
    startupOnly: args.has('startup-only'),
    bundle: args.get('bundle') ?? env.BENCH_BUNDLE ?? null,
    help: args.has('help'),
  };
}

function profileTargetOf(value: string): Options['profileTarget'] {
  if (value === 'c' || value === 'c-oauth' || value === 'c-mcp') return value;
  throw new Error(`--profile-target must be c, c-oauth or c-mcp, not ${value}`);
}
