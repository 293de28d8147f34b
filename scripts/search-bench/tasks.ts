/**
 * The task sets: requests written the way people ask an assistant, each with every tool that does
 * it, one JSON object a line. Two files of one distribution: `tasks.dev.jsonl` to look at while
 * building a ranker, and `tasks.holdout.jsonl`, of which only aggregate figures are read, so that
 * tuning and measuring never use the same tasks. A third, `tasks.fresh.jsonl`, is about other
 * apps than those two (apps.ts FRESH_APPS), on which no rule was developed; it is read like the
 * holdout, as aggregates only.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';

export const SETS = ['dev', 'holdout', 'fresh'] as const;
export type SetName = (typeof SETS)[number];

/**
 * What `--set all` runs: the sets over the 50 apps. The fresh set runs only on its own, since it
 * registers 10 more apps, which would change the others' figures across apps.
 */
export const USUAL_SETS: readonly SetName[] = ['dev', 'holdout'];

/** The sets a `--set` value names, or null when it names none. */
export function chooseSets(value: string): readonly SetName[] | null {
  if (value === 'all') return USUAL_SETS;
  const name = SETS.find((candidate) => candidate === value);
  return name ? [name] : null;
}

const taskSchema = z.strictObject({
  id: z.string().regex(/^[a-z0-9-]+$/),
  app: z.string().min(1),
  query: z.string().trim().min(1),
  expected: z.array(z.string().min(1)).min(1),
  note: z.string().optional(),
});

export type Task = z.infer<typeof taskSchema>;

export interface TaskSet {
  name: SetName;
  tasks: Task[];
}

export function taskFile(name: SetName): URL {
  return new URL(`./tasks.${name}.jsonl`, import.meta.url);
}

/**
 * Every set, checked: the shape of every task, ids unique across the sets, every app one of its
 * set's `apps`, no tool listed twice. Whether each tool exists is checked against the server later.
 */
export async function loadTaskSets(apps: Readonly<Record<SetName, ReadonlySet<string>>>): Promise<TaskSet[]> {
  const sets: TaskSet[] = [];
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const name of SETS) {
    const tasks: Task[] = [];
    const lines = (await readFile(taskFile(name), 'utf8')).split('\n');
    for (const [index, line] of lines.entries()) {
      if (line.trim() === '') continue;
      const where = `tasks.${name}.jsonl line ${index + 1}`;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (error) {
        throw new Error(`${where}: not JSON`, { cause: error });
      }
      const parsed = taskSchema.safeParse(value);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new Error(`${where}: ${issue?.path.join('/') || 'the task'}: ${issue?.message}`);
      }
      tasks.push(parsed.data);
    }
    for (const task of tasks) {
      if (seen.has(task.id)) problems.push(`${task.id} appears twice`);
      seen.add(task.id);
      if (!apps[name].has(task.app))
        problems.push(`${task.id} names the app "${task.app}", which is not one of the ${name} set's apps`);
      if (new Set(task.expected).size !== task.expected.length)
        problems.push(`${task.id} lists a tool twice`);
    }
    sets.push({ name, tasks });
  }
  if (problems.length > 0) throw new Error(`the task set has problems:\n  ${problems.join('\n  ')}`);
  return sets;
}
