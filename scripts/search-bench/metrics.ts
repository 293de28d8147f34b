/**
 * Retrieval figures over ranked answers. A task is answered at the rank (1-based) of the first of
 * its right tools in the answer; any of them counts, since each one does the task.
 */

/** The rank of the first right tool among the answered ones, or null when none was answered. */
export function firstRank(answered: readonly string[], expected: readonly string[]): number | null {
  const right = new Set(expected);
  const index = answered.findIndex((tool) => right.has(tool));
  return index === -1 ? null : index + 1;
}

export interface Scores {
  tasks: number;
  /** Share of tasks whose first answer is right. */
  recallAt1: number;
  /** Share of tasks with a right tool among the first five answers. */
  recallAt5: number;
  /** Mean over tasks of 1 / rank of the first right tool (0 when none is in the answer). */
  mrr: number;
}

/** Figures over the ranks of a set of tasks (null: no right tool in the answer, which holds at most 10). */
export function score(ranks: readonly (number | null)[]): Scores {
  const tasks = ranks.length;
  if (tasks === 0) return { tasks, recallAt1: 0, recallAt5: 0, mrr: 0 };
  let at1 = 0;
  let at5 = 0;
  let reciprocal = 0;
  for (const rank of ranks) {
    if (rank === null) continue;
    if (rank === 1) at1 += 1;
    if (rank <= 5) at5 += 1;
    reciprocal += 1 / rank;
  }
  return { tasks, recallAt1: at1 / tasks, recallAt5: at5 / tasks, mrr: reciprocal / tasks };
}
