/** The benchmark's printed table and its JSON, from the figures `search-bench.ts` gathered. */
import { ms, percentile } from '../corpus/stats.ts';
import type { Scores } from './metrics.ts';
import type { OverlapSummary } from './overlap.ts';
import type { SetName } from './tasks.ts';

export interface TaskOutcome {
  id: string;
  app: string;
  query: string;
  expected: string[];
  /** Rank of the first right tool (1-based), null when none is among the 10 answered. */
  scopedRank: number | null;
  acrossRank: number | null;
  scopedTop: string[];
  acrossTop: string[];
  overlap: number;
}

export interface SetOutcome {
  name: SetName;
  scoped: Scores;
  across: Scores;
  overlap: OverlapSummary;
  tasks: TaskOutcome[];
}

export interface BenchOutcome {
  commit: string;
  apps: number;
  tools: number;
  /** Whole-collection mode: documents registered beside the bench's apps, and those refused. */
  collection?: { registered: number; refused: number; seconds: number };
  sets: SetOutcome[];
  latency: { scoped: number[]; across: number[] };
  memory: { rss: number; peak: number };
}

const fixed = (value: number) => value.toFixed(2);
const percent = (part: number, whole: number) =>
  whole === 0 ? '—' : `${Math.round((100 * part) / whole)} %`;
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

function latencyLine(label: string, samples: number[]): string {
  if (samples.length === 0) return `${label}—`;
  return `${label}p50 ${ms(percentile(samples, 50))}, p99 ${ms(percentile(samples, 99))}, max ${ms(Math.max(...samples))} (${samples.length} answers)`;
}

export function overlapLine(summary: OverlapSummary): string {
  const [zero, one, two, more] = summary.histogram;
  return `${summary.atMostOne} of ${summary.tasks} (${percent(summary.atMostOne, summary.tasks)}) share ≤ 1 content word with every right tool's title (0: ${zero}, 1: ${one}, 2: ${two}, 3+: ${more})`;
}

export function formatReport(outcome: BenchOutcome, options: { verbose: boolean }): string {
  const lines: string[] = [];
  const total = outcome.sets.reduce((sum, set) => sum + set.tasks.length, 0);
  lines.push(
    `search-bench at ${outcome.commit}: ${outcome.apps} apps, ${outcome.tools.toLocaleString('en')} tools, ${total} tasks (${outcome.sets.map((set) => `${set.name} ${set.tasks.length}`).join(', ')})`,
  );
  if (outcome.collection) {
    const { registered, refused, seconds } = outcome.collection;
    lines.push(
      `whole collection: ${registered} more documents registered (${refused} refused) in ${(seconds / 60).toFixed(1)} min`,
    );
  }
  lines.push(
    '',
    '| set     | search              | tasks | recall@1 | recall@5 |  MRR |',
    '|---------|---------------------|------:|---------:|---------:|-----:|',
  );
  for (const set of outcome.sets) {
    for (const [label, scores] of [
      ['scoped to the app', set.scoped],
      [`across ${outcome.apps.toLocaleString('en')} apps`, set.across],
    ] as const) {
      lines.push(
        `| ${set.name.padEnd(7)} | ${label.padEnd(19)} | ${String(scores.tasks).padStart(5)} | ${fixed(scores.recallAt1).padStart(8)} | ${fixed(scores.recallAt5).padStart(8)} | ${fixed(scores.mrr)} |`,
      );
    }
  }
  lines.push(
    '',
    latencyLine('/tools?q= scoped  ', outcome.latency.scoped),
    latencyLine('/tools?q= across  ', outcome.latency.across),
    `server RSS         ${mib(outcome.memory.rss)} at the end, ${mib(outcome.memory.peak)} at its peak`,
  );
  for (const set of outcome.sets) lines.push(`wording (${set.name.padEnd(7)}) ${overlapLine(set.overlap)}`);

  // Per app for the dev set and the fresh set (whose apps are its point); never for the holdout.
  for (const set of outcome.sets.filter((candidate) => candidate.name !== 'holdout')) {
    lines.push(
      '',
      `recall@5 by app (${set.name} set):`,
      '| app             | tasks | scoped | across |',
      '|-----------------|------:|-------:|-------:|',
    );
    const byApp = new Map<string, TaskOutcome[]>();
    for (const task of set.tasks) byApp.set(task.app, [...(byApp.get(task.app) ?? []), task]);
    for (const [app, tasks] of byApp) {
      const at5 = (rank: number | null) => rank !== null && rank <= 5;
      lines.push(
        `| ${app.padEnd(15)} | ${String(tasks.length).padStart(5)} | ${fixed(tasks.filter((task) => at5(task.scopedRank)).length / tasks.length).padStart(6)} | ${fixed(tasks.filter((task) => at5(task.acrossRank)).length / tasks.length).padStart(6)} |`,
      );
    }
  }
  const dev = outcome.sets.find((set) => set.name === 'dev');
  if (dev && options.verbose) {
    const failing = dev.tasks.filter(
      (task) =>
        !(
          task.scopedRank !== null &&
          task.scopedRank <= 5 &&
          task.acrossRank !== null &&
          task.acrossRank <= 5
        ),
    );
    lines.push('', `dev tasks without a right tool in the top 5 (${failing.length}):`);
    const rank = (value: number | null) => (value === null ? '—' : String(value));
    for (const task of failing) {
      lines.push(
        `  ${task.id} (scoped ${rank(task.scopedRank)}, across ${rank(task.acrossRank)}) "${task.query}" → ${task.expected.join(' | ')}`,
        `      scoped: ${task.scopedTop.join(', ') || '(nothing)'}`,
        `      across: ${task.acrossTop.join(', ') || '(nothing)'}`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The figures as JSON. Per-task results only for the dev set: the holdout is read as aggregates,
 * so what a ranker misses there is never looked at one task at a time.
 */
export function jsonReport(outcome: BenchOutcome): unknown {
  const summary = (samples: number[]) => ({
    answers: samples.length,
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
    max: samples.length === 0 ? 0 : Math.max(...samples),
  });
  return {
    commit: outcome.commit,
    apps: outcome.apps,
    tools: outcome.tools,
    ...(outcome.collection ? { collection: outcome.collection } : {}),
    sets: Object.fromEntries(
      outcome.sets.map((set) => [
        set.name,
        {
          scoped: set.scoped,
          across: set.across,
          overlap: set.overlap,
          ...(set.name === 'dev' ? { tasks: set.tasks } : {}),
        },
      ]),
    ),
    latencyMs: { scoped: summary(outcome.latency.scoped), across: summary(outcome.latency.across) },
    memory: outcome.memory,
  };
}
