/**
 * Summarizes a V8 `.cpuprofile` (from `node --cpu-prof`): self time by function and by package
 * (where the CPU actually burns), and inclusive time by package and by toolgate function (which
 * layer of a request costs what, callees included).
 *
 * Usage: `npx tsx scripts/bench/profile-summary.ts <file.cpuprofile> [top]`
 */
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface Row {
  name: string;
  ms: number;
  share: number;
}

export interface ProfileSummary {
  /** Sampled wall time of the profile, ms. */
  totalMs: number;
  /** Time not idle (everything but `(idle)`), ms. */
  busyMs: number;
  selfByFunction: Row[];
  selfByPackage: Row[];
  inclusiveByPackage: Row[];
  inclusiveByToolgateFunction: Row[];
  /** Self and inclusive time of GROUPS. */
  groups: GroupRow[];
  /** The JS callers of the heaviest native functions (where `writev` & co. are called from). */
  nativeCallers: Array<{ name: string; ms: number; callers: Row[] }>;
  /** Set when a time window was asked for but could not be applied. */
  note?: string;
}

/** A span of CLOCK_MONOTONIC in µs, the clock of V8's profile timestamps on Linux. */
export interface Window {
  fromUs: number;
  toUs: number;
}

const ROOT = pathToFileURL(`${process.cwd()}/`).href;

/** `node_modules/<pkg>` (scoped too), a node core area, wasm, toolgate's own folders, or a V8 pseudo-frame. */
export function packageOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (url === '') {
    if (functionName.startsWith('(')) return functionName; // (garbage collector), (program), (idle), (root)
    // Code compiled from strings has no URL either: ajv's validators are `validate<N>`.
    if (/^validate\d*$/.test(functionName)) return '(ajv-compiled validators)';
    return '(native builtins)';
  }
  const modules = url.lastIndexOf('node_modules/');
  if (modules !== -1) {
    const parts = url.slice(modules + 'node_modules/'.length).split('/');
    const name = parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] ?? url);
    return name;
  }
  if (url.startsWith('node:internal/deps/undici')) return 'node:undici (fetch)';
  if (url.startsWith('node:')) {
    const area =
      url
        .slice('node:'.length)
        .replace(/^internal\//, '')
        .split('/')[0] ?? url;
    return `node:${area.replace(/\.js$/, '')}`;
  }
  if (url.startsWith('wasm://')) return '(wasm: PGlite / hdr)';
  if (url.startsWith(ROOT)) {
    const rel = url.slice(ROOT.length);
    const parts = rel.split('/');
    return parts.length > 2 ? `toolgate ${parts[0]}/${parts[1]}` : `toolgate ${parts[0]}`;
  }
  return url;
}

function frameName(frame: CallFrame): string {
  // tsx compiles our .ts files with whitespace minified: their line numbers mean nothing.
  if (frame.url.startsWith(ROOT))
    return `${frame.functionName || '(anonymous)'} ${frame.url.slice(ROOT.length)}`;
  const short = frame.url.replace(/^.*node_modules\//, '');
  const where = short ? ` ${short}:${frame.lineNumber + 1}` : '';
  return `${frame.functionName || '(anonymous)'}${where}`;
}

/** Frames that only dispatch (tick queue, bootstrap): on nearly every stack, so left out of inclusive time. */
const DISPATCH = new Set(['node:process', 'node:bootstrap']);

/** The usual suspects of a proxy call, each a set of packages / areas (see packageOf). */
export const GROUPS: ReadonlyArray<{ name: string; match: (pkg: string) => boolean }> = [
  { name: 'ky (wrapper around fetch)', match: (p) => p === 'ky' },
  { name: "fetch (Node's bundled undici)", match: (p) => p === 'node:undici (fetch)' },
  { name: 'AbortController / AbortSignal', match: (p) => p === 'node:abort_controller' },
  { name: 'web streams (fetch bodies)', match: (p) => p === 'node:webstreams' },
  { name: 'tRPC (caller, middlewares)', match: (p) => p.startsWith('@trpc/') },
  { name: 'zod', match: (p) => p === 'zod' },
  { name: 'ajv (parameter validation)', match: (p) => p === 'ajv' || p === '(ajv-compiled validators)' },
  {
    name: 'Prisma client + adapters',
    match: (p) =>
      (p.startsWith('@prisma/') && p !== '@prisma/schema-engine-wasm') ||
      p === 'pglite-prisma-adapter' ||
      p === 'toolgate server/db',
  },
  {
    name: 'database driver (PGlite, pg)',
    match: (p) => p === '@electric-sql/pglite' || p.startsWith('(wasm') || p === 'pg' || p.startsWith('pg-'),
  },
  {
    name: 'pino logging',
    match: (p) => p === 'pino' || p === 'sonic-boom' || p === 'fast-redact' || p === '@pinojs/redact',
  },
  { name: 'prom-client metrics', match: (p) => p === 'prom-client' },
  { name: 'lru-cache', match: (p) => p === 'lru-cache' },
  { name: 'toolgate own code (server/, shared/)', match: (p) => p.startsWith('toolgate ') },
  {
    name: 'node:http server + client sockets',
    match: (p) => /^node:(_http_|http$|net$|stream_base)/.test(p),
  },
  { name: 'garbage collector', match: (p) => p === '(garbage collector)' },
];

export interface GroupRow {
  name: string;
  selfMs: number;
  selfShare: number;
  inclusiveMs: number;
  inclusiveShare: number;
}

function rows(map: Map<string, number>, totalMs: number, top: number): Row[] {
  return [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, us]) => ({ name, ms: us / 1000, share: totalMs > 0 ? us / 1000 / totalMs : 0 }));
}

function add(map: Map<string, number>, key: string, value: number): void {
  map.set(key, (map.get(key) ?? 0) + value);
}

/** Only the samples inside `window` count when it overlaps the profile (e.g. the measured load, not start-up). */
export function summarizeProfile(profile: CpuProfile, top = 25, window?: Window): ProfileSummary {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  // Sample i lasts until sample i+1 (the last one: the mean interval).
  const { samples, timeDeltas } = profile;
  const meanDelta = samples.length > 0 ? (profile.endTime - profile.startTime) / samples.length : 0;
  const selfFn = new Map<string, number>();
  const selfPkg = new Map<string, number>();
  const inclPkg = new Map<string, number>();
  const inclOwn = new Map<string, number>();
  const callers = new Map<string, Map<string, number>>();
  const groupSelf = GROUPS.map(() => 0);
  const groupIncl = GROUPS.map(() => 0);
  let from = Number.NEGATIVE_INFINITY;
  let to = Number.POSITIVE_INFINITY;
  let note: string | undefined;
  if (window) {
    if (window.fromUs < profile.endTime && window.toUs > profile.startTime) {
      from = window.fromUs;
      to = window.toUs;
    } else {
      note = 'the measured window is outside the profile timestamps: the whole profile is summarized';
    }
  }
  let totalUs = 0;
  let idleUs = 0;
  let at = profile.startTime;
  for (let i = 0; i < samples.length; i += 1) {
    at += timeDeltas[i] ?? 0;
    if (at < from || at > to) continue;
    const duration = i + 1 < timeDeltas.length ? (timeDeltas[i + 1] as number) : meanDelta;
    const leaf = byId.get(samples[i] as number);
    if (!leaf) continue;
    totalUs += duration;
    const leafPkg = packageOf(leaf.callFrame);
    if (leafPkg === '(idle)') {
      idleUs += duration;
      continue;
    }
    const leafName = frameName(leaf.callFrame);
    add(selfFn, leafName, duration);
    if (leafPkg === '(native builtins)') {
      // The first frame above the native one outside node core (fetch's undici counts as outside).
      let caller = 'unknown';
      for (let id = parent.get(leaf.id); id !== undefined; id = parent.get(id)) {
        const frame = (byId.get(id) as ProfileNode).callFrame;
        const core = frame.url.startsWith('node:') && !frame.url.startsWith('node:internal/deps/');
        if (frame.url !== '' && !core) {
          caller = frameName(frame);
          break;
        }
      }
      const perLeaf = callers.get(leafName) ?? new Map<string, number>();
      callers.set(leafName, perLeaf);
      add(perLeaf, caller, duration);
    }
    add(selfPkg, leafPkg, duration);
    const seenPkg = new Set<string>();
    const seenOwn = new Set<string>();
    for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
      const frame = (byId.get(id) as ProfileNode).callFrame;
      const pkg = packageOf(frame);
      if (!pkg.startsWith('(') && !DISPATCH.has(pkg)) seenPkg.add(pkg);
      if (pkg.startsWith('toolgate ')) seenOwn.add(frameName(frame));
    }
    for (const pkg of seenPkg) add(inclPkg, pkg, duration);
    for (const fn of seenOwn) add(inclOwn, fn, duration);
    GROUPS.forEach((group, g) => {
      if (group.match(leafPkg)) groupSelf[g] = (groupSelf[g] as number) + duration;
      if (group.match(leafPkg) || [...seenPkg].some(group.match))
        groupIncl[g] = (groupIncl[g] as number) + duration;
    });
  }
  const busyMs = (totalUs - idleUs) / 1000;
  return {
    totalMs: totalUs / 1000,
    busyMs,
    selfByFunction: rows(selfFn, busyMs, top),
    selfByPackage: rows(selfPkg, busyMs, top),
    inclusiveByPackage: rows(inclPkg, busyMs, top),
    inclusiveByToolgateFunction: rows(inclOwn, busyMs, top),
    nativeCallers: [...callers.entries()]
      .map(([name, perLeaf]) => ({
        name,
        ms: [...perLeaf.values()].reduce((a, b) => a + b, 0) / 1000,
        callers: rows(perLeaf, busyMs, 4),
      }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 6),
    groups: GROUPS.map((group, g) => {
      const selfMs = (groupSelf[g] as number) / 1000;
      const inclusiveMs = (groupIncl[g] as number) / 1000;
      return {
        name: group.name,
        selfMs,
        selfShare: busyMs > 0 ? selfMs / busyMs : 0,
        inclusiveMs,
        inclusiveShare: busyMs > 0 ? inclusiveMs / busyMs : 0,
      };
    }),
    ...(note ? { note } : {}),
  };
}

/**
 * Reads a profile and puts each frame of the bundle (dist/…/*.mjs, which holds most packages too)
 * back at its source through the bundle's source map, so time is told by package and by file.
 */
export function readProfile(file: string): CpuProfile {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const maps = new Map<string, SourceMap | null>();
  const mapOf = (url: string): SourceMap | null => {
    let map = maps.get(url);
    if (map === undefined) {
      const mapFile = `${fileURLToPath(url)}.map`;
      map = existsSync(mapFile) ? new SourceMap(JSON.parse(readFileSync(mapFile, 'utf8'))) : null;
      maps.set(url, map);
    }
    return map;
  };
  for (const { callFrame: frame } of profile.nodes) {
    if (!frame.url.startsWith('file://') || !frame.url.endsWith('.mjs') || !frame.url.includes('/dist/'))
      continue;
    const entry = mapOf(frame.url)?.findEntry(frame.lineNumber, frame.columnNumber);
    if (!entry || !('originalSource' in entry)) continue;
    frame.url = entry.originalSource.startsWith('file://')
      ? entry.originalSource
      : pathToFileURL(path.resolve(path.dirname(fileURLToPath(frame.url)), entry.originalSource)).href;
    frame.lineNumber = entry.originalLine;
    frame.columnNumber = entry.originalColumn;
  }
  return profile;
}

/** Plain-text tables; shares are of the busy (non-idle) time. */
export function formatSummary(summary: ProfileSummary): string {
  const table = (title: string, list: Row[]) =>
    [
      `${title}`,
      ...list.map(
        (row) =>
          `  ${row.ms.toFixed(0).padStart(7)} ms ${(row.share * 100).toFixed(1).padStart(5)} %  ${row.name}`,
      ),
    ].join('\n');
  const groups = [
    'the usual suspects (self: CPU in the code itself; inclusive: with what it calls, synchronously):',
    ...summary.groups.map(
      (g) =>
        `  self ${g.selfMs.toFixed(0).padStart(6)} ms ${(g.selfShare * 100).toFixed(1).padStart(5)} %   inclusive ${g.inclusiveMs.toFixed(0).padStart(6)} ms ${(g.inclusiveShare * 100).toFixed(1).padStart(5)} %  ${g.name}`,
    ),
  ].join('\n');
  return [
    `profile: ${summary.totalMs.toFixed(0)} ms sampled, ${summary.busyMs.toFixed(0)} ms busy (shares below are of busy time)`,
    groups,
    table('self time by function:', summary.selfByFunction),
    table('self time by package / area:', summary.selfByPackage),
    table(
      'inclusive time by package (a sample counts once per package on its stack):',
      summary.inclusiveByPackage,
    ),
    table('inclusive time by toolgate function:', summary.inclusiveByToolgateFunction),
    [
      'heaviest native functions and their first callers outside node core:',
      ...summary.nativeCallers.flatMap((n) => [
        `  ${n.ms.toFixed(0).padStart(7)} ms  ${n.name}`,
        ...n.callers.map((c) => `      ${c.ms.toFixed(0).padStart(7)} ms  from ${c.name}`),
      ]),
    ].join('\n'),
  ].join('\n\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: tsx scripts/bench/profile-summary.ts <file.cpuprofile> [top]\n');
    process.exit(2);
  }
  const top = Number(process.argv[3] ?? 25);
  process.stdout.write(`${formatSummary(summarizeProfile(readProfile(file), top))}\n`);
}
