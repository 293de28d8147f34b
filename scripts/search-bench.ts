/**
 * npm run search-bench — how well `GET /tools?q=` finds the tool a person asks for (issue 22).
 *
 * Fetches the corpus from the npm registry into a cache outside the repository (as `npm run
 * corpus` does), starts toolgate as its own process (PGlite in memory, or `--database`), registers the apps the
 * task set is about and look-alike neighbours (about 50 apps), checks that every task's tools exist,
 * then asks each task's query scoped to its app (`appId=`) and across all apps, and prints recall@1,
 * recall@5 and MRR per set, the latency of the answers, the server's memory and how differently
 * the tasks are worded from the documents. It reads only `toolId` of the answers, so it measures
 * the plain word filter and a ranked search alike. Low scores are figures, not failures: it exits
 * non-zero only when it cannot measure (an unknown tool in a task, a refused registration).
 *
 *   npm run search-bench                         dev and holdout, about 50 apps
 *   npm run search-bench -- --set fresh          the fresh set: 10 apps no rule was written for,
 *                                                registered beside the 50 (aggregates only)
 *   npm run search-bench -- --set dev --verbose  the dev set, with the tasks that miss (top 3 shown)
 *   npm run search-bench -- --json out.json      also the figures as JSON (per task for dev only)
 *   npm run search-bench -- --collection         the whole APIs.guru collection registered first
 *   npm run search-bench -- --collection --limit 100   …or that many of its documents
 *   npm run search-bench -- --cache <dir>        another cache folder
 *   npm run search-bench -- --database <url>     the server's DATABASE_URL (default pglite:memory,
 *                                                which holds every stored document in the server's
 *                                                own memory); e.g. an empty PostgreSQL database
 *
 * To screen a change to the ranking, `npm run search-screen` (search-bench/screen.ts) gives the
 * same figures in-process in about 20 s.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fetchPackages, listDocuments } from './corpus/documents.ts';
import { type Agent, memoryOf, provisionAgent, startServer } from './corpus/server.ts';
import { APPS_OF_SET, appIdsOfSets, type BenchApp, registeredApps } from './search-bench/apps.ts';
import { documentOperations, matchOperations } from './search-bench/catalog.ts';
import { listTools, registerDocument, searchTools } from './search-bench/client.ts';
import { firstRank, score } from './search-bench/metrics.ts';
import { summarizeOverlap, taskOverlap } from './search-bench/overlap.ts';
import { type BenchOutcome, formatReport, jsonReport, type SetOutcome } from './search-bench/report.ts';
import { chooseSets, loadTaskSets, type TaskSet } from './search-bench/tasks.ts';

const log = (line: string) => process.stderr.write(`${line}\n`);

/** A reason the benchmark cannot measure: reported, exit code 1. */
class HarnessError extends Error {
  override name = 'HarnessError';
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      set: { type: 'string', default: 'all' },
      json: { type: 'string' },
      cache: { type: 'string', default: path.join(homedir(), '.cache', 'toolgate-corpus') },
      verbose: { type: 'boolean', default: false },
      collection: { type: 'boolean', default: false },
      limit: { type: 'string' },
      database: { type: 'string' },
    },
  });
  const chosen = chooseSets(values.set as string);
  if (!chosen) throw new HarnessError('--set must be dev, holdout, all (dev and holdout) or fresh');
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (limit !== undefined && !(values.collection && Number.isInteger(limit) && limit > 0))
    throw new HarnessError('--limit takes a positive whole number, with --collection');
  const cache = path.resolve(values.cache as string);

  await fetchPackages(cache, log);
  const sets = await loadTaskSets(appIdsOfSets());
  const apps = registeredApps(chosen.includes('fresh'));
  // The sets whose apps this run registers: their tools are checked, whichever of them --set runs.
  const checked = sets.filter((set) => APPS_OF_SET[set.name].every((app) => apps.includes(app)));
  const titled = new Set(checked.flatMap((set) => APPS_OF_SET[set.name]));

  const adminKey = `bench-${randomBytes(24).toString('hex')}`;
  log('starting toolgate…');
  const server = await startServer(adminKey, values.database ? { DATABASE_URL: values.database } : {});
  try {
    const agent = await provisionAgent(server.url, adminKey, 'search-bench');
    const titles = new Map<string, Map<string, string>>();
    let tools = 0;
    for (const app of apps) {
      const registered = await registerApp(server.url, adminKey, agent, cache, app, titled.has(app));
      tools += registered.tools;
      if (registered.titles) titles.set(app.id, registered.titles);
    }
    log(`registered ${apps.length} apps, ${tools} tools`);
    checkTasks(checked, titles);

    let collection: BenchOutcome['collection'];
    if (values.collection) {
      const more = await registerCollection(server.url, adminKey, cache, limit, apps);
      collection = { registered: more.registered, refused: more.refused, seconds: more.seconds };
      tools += more.tools;
    }

    const latency = { scoped: [] as number[], across: [] as number[] };
    const outcomes: SetOutcome[] = [];
    for (const set of sets.filter((candidate) => chosen.includes(candidate.name))) {
      log(`asking the ${set.tasks.length} ${set.name} tasks…`);
      outcomes.push(await runSet(server.url, agent, set, titles, latency));
    }
    const outcome: BenchOutcome = {
      commit: currentCommit(),
      apps: apps.length + (collection?.registered ?? 0),
      tools,
      ...(collection ? { collection } : {}),
      sets: outcomes,
      latency,
      memory: await memoryOf(server.child),
    };
    process.stdout.write(formatReport(outcome, { verbose: values.verbose === true }));
    if (values.json) {
      await writeFile(values.json, `${JSON.stringify(jsonReport(outcome), null, 1)}\n`);
      log(`wrote ${values.json}`);
    }
  } finally {
    server.child.kill('SIGTERM');
  }
}

/**
 * Registers one of the bench's apps; a refusal is a harness error. For the apps the tasks are
 * about (`titled`), answers each tool's title (the operation's summary, else the tool's name, as CONTRACT §2
 * defines `title`), read from the document beside the server's own listing.
 */
async function registerApp(
  url: string,
  adminKey: string,
  agent: Agent,
  cache: string,
  app: BenchApp,
  titled: boolean,
): Promise<{ tools: number; titles?: Map<string, string> }> {
  const file = path.join(cache, 'x', app.file);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new HarnessError(`${app.id}: cannot read ${file}`, { cause: error });
  }
  const registration = await registerDocument(url, adminKey, app.id, text);
  if (registration.status !== 200) {
    throw new HarnessError(
      `${app.id}: registration answered ${registration.status}: ${registration.issues?.[0]?.message ?? ''}`,
    );
  }
  if (!titled) return { tools: registration.tools.length };
  const listed = await listTools(url, agent, app.id);
  let operations: ReturnType<typeof matchOperations>;
  try {
    operations = matchOperations(
      documentOperations(JSON.parse(text) as Record<string, unknown>),
      registration.skipped,
      listed,
    );
  } catch (error) {
    throw new HarnessError(`${app.id}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const titles = new Map<string, string>();
  for (const tool of listed) titles.set(tool.name, operations.get(tool.name)?.summary?.trim() || tool.name);
  return { tools: registration.tools.length, titles };
}

/**
 * Every expected tool of every task of the sets given (those whose apps are registered, whatever
 * `--set` runs) is one the server lists.
 */
function checkTasks(sets: TaskSet[], titles: Map<string, Map<string, string>>): void {
  const unknown: string[] = [];
  for (const set of sets) {
    for (const task of set.tasks) {
      for (const tool of task.expected) {
        if (!titles.get(task.app)?.has(tool))
          unknown.push(`${set.name} ${task.id}: ${task.app} has no tool "${tool}"`);
      }
    }
  }
  if (unknown.length > 0) throw new HarnessError(`unknown expected tools:\n  ${unknown.join('\n  ')}`);
}

/** The rest of the corpus (every APIs.guru document, or `limit` of them), refusals counted. */
async function registerCollection(
  url: string,
  adminKey: string,
  cache: string,
  limit: number | undefined,
  apps: readonly BenchApp[],
): Promise<{ registered: number; refused: number; tools: number; seconds: number }> {
  const taken = new Set(apps.map((app) => path.join(cache, 'x', app.file)));
  const documents = (await listDocuments(cache, limit)).filter((document) => !taken.has(document.file));
  log(`registering ${documents.length} more documents…`);
  const started = performance.now();
  let registered = 0;
  let refused = 0;
  let tools = 0;
  for (const [index, document] of documents.entries()) {
    try {
      const answer = await registerDocument(
        url,
        adminKey,
        `c${index + 1}`,
        await readFile(document.file, 'utf8'),
      );
      if (answer.status === 200) {
        registered += 1;
        tools += answer.tools.length;
      } else refused += 1;
    } catch {
      refused += 1;
    }
    if ((index + 1) % 100 === 0) log(`  ${index + 1} / ${documents.length}`);
  }
  return { registered, refused, tools, seconds: (performance.now() - started) / 1000 };
}

async function runSet(
  url: string,
  agent: Agent,
  set: TaskSet,
  titles: Map<string, Map<string, string>>,
  latency: { scoped: number[]; across: number[] },
): Promise<SetOutcome> {
  const tasks: SetOutcome['tasks'] = [];
  for (const task of set.tasks) {
    const scoped = await searchTools(url, agent, task.query, task.app);
    const across = await searchTools(url, agent, task.query, undefined);
    latency.scoped.push(scoped.ms);
    latency.across.push(across.ms);
    const expected = task.expected.map((tool) => `${task.app}:::${tool}`);
    const appTitles = titles.get(task.app) as Map<string, string>;
    tasks.push({
      id: task.id,
      app: task.app,
      query: task.query,
      expected: task.expected,
      scopedRank: firstRank(scoped.toolIds, expected),
      acrossRank: firstRank(across.toolIds, expected),
      scopedTop: scoped.toolIds.slice(0, 3).map((toolId) => toolId.slice(toolId.indexOf(':::') + 3)),
      acrossTop: across.toolIds.slice(0, 3),
      overlap: taskOverlap(
        task.query,
        task.expected.map((tool) => appTitles.get(tool) as string),
      ),
    });
  }
  return {
    name: set.name,
    scoped: score(tasks.map((task) => task.scopedRank)),
    across: score(tasks.map((task) => task.acrossRank)),
    overlap: summarizeOverlap(tasks.map((task) => task.overlap)),
    tasks,
  };
}

function currentCommit(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown commit';
  }
}

main().catch((error: unknown) => {
  log(`search-bench: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
