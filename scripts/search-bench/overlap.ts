/**
 * How many content words a task shares with its operation's title — the measure of whether the
 * task set is phrased as people ask or as the documents are written (issue 22 wants at least half
 * of the tasks to share at most one). Deliberately simple and independent of any ranker: lower
 * case, split at anything not a letter or digit, stop words out, a light suffix stem.
 */

/** English function words (the usual short list) and the politeness of requests to an assistant. */
const STOP_WORDS = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below ' +
    'between both but by can could did do does doing down during each few for from further had has have ' +
    'having he her here hers herself him himself his how i if in into is it its itself just me more most ' +
    'my myself no nor not now of off on once only or other our ours ourselves out over own please same ' +
    'she should so some such than that the their theirs them themselves then there these they this those ' +
    'through to too under until up very was we were what when where which while who whom why will with ' +
    'would you your yours yourself yourselves s t don'
  ).split(' '),
);

/** Plural and verb endings off: `issues` → `issu`, `created`/`creates`/`creating` → `creat`. */
export function stem(word: string): string {
  let w = word;
  if (w.length > 4 && w.endsWith('ies')) w = `${w.slice(0, -3)}y`;
  else if (w.length > 4 && /(ss|x|z|ch|sh)es$/.test(w)) w = w.slice(0, -2);
  else if (w.length > 3 && w.endsWith('s') && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.length > 5 && w.endsWith('ing')) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith('ed')) w = w.slice(0, -2);
  if (w.length > 3 && w.endsWith('e')) w = w.slice(0, -1);
  return w;
}

/** The stemmed content words of a text. camelCase and snake_case names split into their words. */
export function contentWords(text: string): Set<string> {
  const words = text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== '' && !STOP_WORDS.has(word));
  return new Set(words.map(stem));
}

/** How many content words the task and the title share. */
export function sharedContentWords(query: string, title: string): number {
  const titleWords = contentWords(title);
  let shared = 0;
  for (const word of contentWords(query)) if (titleWords.has(word)) shared += 1;
  return shared;
}

/**
 * A task's overlap: the most it shares with the title of any tool that answers it (a task counts
 * as "worded differently" only when it is so for every right answer).
 */
export function taskOverlap(query: string, titles: string[]): number {
  return Math.max(0, ...titles.map((title) => sharedContentWords(query, title)));
}

export interface OverlapSummary {
  tasks: number;
  /** Tasks sharing at most one content word with every right answer's title. */
  atMostOne: number;
  /** How many tasks share 0, 1, 2 and 3 or more words. */
  histogram: [number, number, number, number];
}

export function summarizeOverlap(overlaps: number[]): OverlapSummary {
  const histogram: [number, number, number, number] = [0, 0, 0, 0];
  for (const overlap of overlaps) {
    const bin = Math.min(3, overlap) as 0 | 1 | 2 | 3;
    histogram[bin] += 1;
  }
  return { tasks: overlaps.length, atMostOne: histogram[0] + histogram[1], histogram };
}
