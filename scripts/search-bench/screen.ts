/**
 * npm run search-screen — the search benchmark's figures without a server, for screening a change
 * to the ranking in a minute instead of several (BENCHMARKS.md "ranked search").
 *
 * Compiles the bench's 50 apps once with the server's own compile path (`compileDocument`, as a
 * registration does: the app's id and provider label, no service parameter), opens their
 * segments into one shared vocabulary in catalog order (apps by id), and ranks each task with the
 * functions `GET /tools?q=` uses (`readQuery`, `rank`), scoped to its app and across all apps. It
 * prints recall@1, recall@5 and MRR to three decimals; `npm run search-bench` (over HTTP) stays the
 * measure of record, and this script gives its figures to the second decimal.
 *
 *   npm run search-screen -- --set dev                     the dev set
 *   npm run search-screen -- --set dev --json a.json       also each task's ranks, to compare later
 *   npm run search-screen -- --set dev --compare a.json    which tasks rank better or worse than in
 *                                                          a.json (dev: each task; holdout: counts only)
 *   npm run search-screen -- --set fresh                   the fresh set: 10 apps no rule was written
 *                                                          for, registered beside the 50 (60 apps)
 *   npm run search-screen -- --cache <dir>                 another corpus cache (as search-bench's)
 *
 * The holdout's and the fresh set's per-task lines are never printed (only counts, and the fresh
 * set's figures per app), so that screening on them cannot become tuning on them. Each set's
 * wording (how many tasks share at most one content word with their right tools' titles) is
 * printed beside its figures.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { compileDocument, openCatalog } from '../../server/catalog/catalog.ts';
import { readQuery } from '../../server/search/analyze.ts';
import { rank, SharedVocabulary } from '../../server/search/rank.ts';
import { openSegment, type Segment } from '../../server/search/segment.ts';
import { fetchPackages } from '../corpus/documents.ts';
import { APPS_OF_SET, appIdsOfSets, registeredApps } from './apps.ts';
import { firstRank, type Scores, score } from './metrics.ts';
import { summarizeOverlap, taskOverlap } from './overlap.ts';
import { overlapLine } from './report.ts';
import { chooseSets, loadTaskSets, type SetName, type Task } from './tasks.ts';

const log = (line: string) => process.stderr.write(`${line}\n`);

/** As search-bench asks: `limit=10`, for which the server ranks one more (whether more follow). */
const ANSWERED = 10;
/** The provider label search-bench registers every app with. */
const PROVIDER = 'bench.api';

interface TaskRanks {
  scoped: number | null;
  across: number | null;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      set: { type: 'string', default: 'dev' },
      json: { type: 'string' },
      compare: { type: 'string' },
      cache: { type: 'string', default: path.join(homedir(), '.cache', 'toolgate-corpus') },
    },
  });
  const chosen = chooseSets(values.set as string);
  if (!chosen) throw new Error('--set must be dev, holdout, all (dev and holdout) or fresh');
  const cache = path.resolve(values.cache as string);
  await fetchPackages(cache, log);
  const sets = await loadTaskSets(appIdsOfSets());

  const started = performance.now();
  const vocabulary = new SharedVocabulary();
  const segments: Segment[] = [];
  // Each tool's title (summary, else name, as `/tools` defines it) of the chosen sets' apps, for the wording.
  const titled = new Set(chosen.flatMap((name) => APPS_OF_SET[name].map((app) => app.id)));
  const titles = new Map<string, Map<string, string>>();
  for (const app of registeredApps(chosen.includes('fresh'))) {
    const document = JSON.parse(await readFile(path.join(cache, 'x', app.file), 'utf8')) as unknown;
    const compiled = await compileDocument(document, { app: { appId: app.id, provider: PROVIDER } });
    if (!compiled.ok) throw new Error(`${app.id}: ${compiled.error[0]?.message ?? 'not compiled'}`);
    if (titled.has(app.id)) {
      const catalog = openCatalog(compiled.value.catalogText);
      if (!catalog) throw new Error(`${app.id}: the catalog does not open`);
      titles.set(
        app.id,
        new Map([...catalog.tools].map(([name, tool]) => [name, tool.tool.summary?.trim() || name])),
      );
    }
    const segment = openSegment(app.id, compiled.value.searchText, vocabulary);
    if (!segment) throw new Error(`${app.id}: the segment does not open`);
    vocabulary.count(segment, 1);
    segments.push(segment);
  }
  // The server searches its apps in catalog order: by id.
  segments.sort((a, b) => (a.appId < b.appId ? -1 : a.appId > b.appId ? 1 : 0));
  const byApp = new Map(segments.map((segment) => [segment.appId, segment]));
  const tools = segments.reduce((sum, segment) => sum + segment.names.length, 0);
  log(
    `compiled ${segments.length} apps, ${tools} tools in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );

  const previous = values.compare
    ? (JSON.parse(await readFile(values.compare, 'utf8')) as Record<string, Record<string, TaskRanks>>)
    : undefined;
  const out: Record<string, Record<string, TaskRanks>> = {};
  const lines: string[] = [];
  for (const set of sets.filter((candidate) => chosen.includes(candidate.name))) {
    const ranks: Record<string, TaskRanks> = {};
    for (const task of set.tasks) {
      const segment = byApp.get(task.app) as Segment;
      const missing = task.expected.filter((tool) => !segment.names.includes(tool));
      if (missing.length > 0) throw new Error(`${task.id}: ${task.app} has no tool "${missing[0]}"`);
      const expected = task.expected.map((tool) => `${task.app}:::${tool}`);
      const answer = (among: readonly Segment[]) => {
        const query = readQuery(task.query);
        // As ToolSearch.search: a task with no term and no exact name finds nothing.
        if (query.terms.size === 0 && query.exact === null) return null;
        const hits = rank(vocabulary, among, query, ANSWERED + 1).slice(0, ANSWERED);
        return firstRank(
          hits.map((hit) => `${hit.appId}:::${hit.name}`),
          expected,
        );
      };
      ranks[task.id] = { scoped: answer([segment]), across: answer(segments) };
    }
    out[set.name] = ranks;
    const all = Object.values(ranks);
    lines.push(
      `${set.name.padEnd(7)} scoped ${figures(score(all.map((r) => r.scoped)))}   across ${figures(score(all.map((r) => r.across)))}   (${all.length} tasks, ${segments.length} apps)`,
    );
    const overlaps = set.tasks.map((task) =>
      taskOverlap(
        task.query,
        task.expected.map((tool) => titles.get(task.app)?.get(tool) as string),
      ),
    );
    lines.push(`  wording: ${overlapLine(summarizeOverlap(overlaps))}`);
    if (set.name === 'dev' || set.name === 'fresh') lines.push(...perApp(set.tasks, ranks));
    const before = previous?.[set.name];
    if (before) lines.push(...comparison(set.name, set.tasks, ranks, before));
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  if (values.json) {
    await writeFile(values.json, `${JSON.stringify(out, null, 1)}\n`);
    log(`wrote ${values.json}`);
  }
}

/** recall@5 scoped and across for each app of a set, in the set's order: aggregates only. */
function perApp(tasks: readonly Task[], ranks: Record<string, TaskRanks>): string[] {
  const byApp = new Map<string, TaskRanks[]>();
  for (const task of tasks)
    byApp.set(task.app, [...(byApp.get(task.app) ?? []), ranks[task.id] as TaskRanks]);
  const at5 = (all: TaskRanks[], side: keyof TaskRanks) =>
    score(all.map((r) => r[side])).recallAt5.toFixed(2);
  return [
    '  recall@5 by app (scoped / across):',
    ...[...byApp].map(
      ([app, all]) =>
        `    ${app.padEnd(16)} ${String(all.length).padStart(3)} tasks  ${at5(all, 'scoped')} / ${at5(all, 'across')}`,
    ),
  ];
}

const figures = (scores: Scores) =>
  `r@1 ${scores.recallAt1.toFixed(3)}  r@5 ${scores.recallAt5.toFixed(3)}  MRR ${scores.mrr.toFixed(3)}`;

/** A rank as a number to compare: a miss (null) is below every rank. */
const place = (rank: number | null) => rank ?? Number.POSITIVE_INFINITY;

/**
 * How many tasks rank their right tool better and worse than before, scoped and across; on the
 * dev set, which ones. The holdout's tasks are only counted.
 */
function comparison(
  name: SetName,
  tasks: ReadonlyArray<{ id: string; query: string }>,
  now: Record<string, TaskRanks>,
  before: Record<string, TaskRanks>,
): string[] {
  const lines: string[] = [];
  for (const side of ['scoped', 'across'] as const) {
    const better: string[] = [];
    const worse: string[] = [];
    for (const task of tasks) {
      const was = before[task.id];
      if (!was) continue;
      const a = place(was[side]);
      const b = place(now[task.id]?.[side] ?? null);
      const line = `    ${task.id}: ${was[side] ?? '–'} → ${now[task.id]?.[side] ?? '–'}  ${task.query}`;
      if (b < a) better.push(line);
      else if (b > a) worse.push(line);
    }
    lines.push(`  ${side}: ${better.length} better, ${worse.length} worse`);
    if (name === 'dev') lines.push(...better.map((l) => `  +${l}`), ...worse.map((l) => `  -${l}`));
  }
  return lines;
}

main().catch((error: unknown) => {
  log(`search-screen: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
