/**
 * Ranking a task against segments (docs/reference.md "Tool search"): BM25F over every field of
 * every tool, with the inverse document frequency of all segments loaded, a task's related words
 * and word beginnings at lower weights, and the task's action weighed against each operation's
 * method. An exact tool name or id ranks first.
 *
 * Written here, over typed arrays, rather than with a search library, because of what was
 * measured (BENCHMARKS.md "Tool search"): MiniSearch over the APIs.guru collection (126,000
 * tools) answered in 136 ms at the median and 750 ms at worst, Orama in 4 s; a task's common
 * words ("list", "get") match tens of thousands of tools, which those engines score through maps
 * of objects. Here a query term's postings are two typed arrays, so the same work takes a few
 * milliseconds; the text analysis around it comes from a library (`stemmer`).
 */
import type { Query } from './analyze.ts';
import { findTerm, type Segment, type Vocabulary } from './segment.ts';

/** Weight of a vocabulary word that begins with a task's word ("star" → "stargazer"). */
const PREFIX_WEIGHT = 0.5;
const PREFIX_MIN_LENGTH = 4;
const PREFIX_MAX_EXTRA = 6;
const PREFIX_MAX_WORDS = 8;
/** Weight of a near spelling of a task's word that no tool holds ("calender" → calendar). */
const SPELLING_WEIGHT = 0.8;
const SPELLING_MAX_WORDS = 4;
/** New words kept unsorted before they are merged into the sorted vocabulary. */
const RECENT_MAX = 2_000;
/** A method the task's verb asks for, a weaker match, and one it does not (when it names an action). */
const METHOD_MATCH = 1.3;
const METHOD_WEAKER = 1.1;
/**
 * The factor of a collection GET (its path ends in a literal: `GET …/issues`) for a task that
 * asks for many things and to read them (or names no action): many things are read from their
 * collection, not from one member's path.
 */
const COLLECTION_READ = 1.2;
/** The least share of a score a tool keeps when the task covers none of its name's words. */
const NAME_COVERAGE_FLOOR = 0.5;
/** A word held by more than this share of all tools is common (see rank). */
const COMMON_SHARE = 0.03;
/** Common words add only to tools the rarer words reached, once those reach `limit` × this… */
const RARE_REACH = 4;
/** …in searches over more tools than this (below it, every word is cheap to score in full). */
const ADD_ONLY_FROM = 20_000;
/** The factor of every tool of an app the task names ("…on my twilio account"). */
const APP_NAMED = 2;
/** A word names an app only when it names at most this many of the searched apps ("google"). */
const APP_NAME_MAX_APPS = 3;
/**
 * Weight of the field names of what a tool answers, for a task that asks a question: "is Karen
 * online" is answered by the tool whose answer has `online`. Read for questions only: the tools
 * that create, update and read a resource answer the same object. Low: a field name is one word
 * of an answer; at 0.5 and 0.7 other questions' right tools fell below tools answering alike.
 */
const ANSWER_WEIGHT = 0.3;
/** Scores are shown as raw / (raw + SCALE), in (0, 1); an exact name is 1. */
const SCALE = 10;

/** The words of every loaded segment, with their document frequencies. */
export class SharedVocabulary implements Vocabulary {
  readonly #ids = new Map<string, number>();
  readonly #words: string[] = [];
  #df = new Float64Array(1024);
  /** How many tools' answers hold each word (the answers' postings are kept apart). */
  #answerDf = new Float64Array(1024);
  #documents = 0;
  /** The words sorted, for word beginnings, but the most recent ones (`#recent`). */
  #sorted: string[] = [];
  #recent: string[] = [];

  idOf(word: string): number {
    let id = this.#ids.get(word);
    if (id === undefined) {
      id = this.#words.length;
      this.#ids.set(word, id);
      this.#words.push(word);
      this.#recent.push(word);
      if (id >= this.#df.length) {
        const grown = new Float64Array(this.#df.length * 2);
        grown.set(this.#df);
        this.#df = grown;
        const answers = new Float64Array(grown.length);
        answers.set(this.#answerDf);
        this.#answerDf = answers;
      }
    }
    return id;
  }

  /** Counts a segment in (+1) or out (-1) of the document frequencies. */
  count(segment: Segment, sign: 1 | -1): void {
    if (this.#recent.length >= RECENT_MAX) this.#mergeRecent();
    this.#documents += sign * segment.names.length;
    for (let i = 0; i < segment.termIds.length; i += 1) {
      const id = segment.termIds[i] as number;
      this.#df[id] =
        (this.#df[id] as number) +
        sign * ((segment.offsets[i + 1] as number) - (segment.offsets[i] as number));
    }
    const answers = segment.answers;
    for (let i = 0; i < answers.termIds.length; i += 1) {
      const id = answers.termIds[i] as number;
      this.#answerDf[id] =
        (this.#answerDf[id] as number) +
        sign * ((answers.offsets[i + 1] as number) - (answers.offsets[i] as number));
    }
  }

  /** How many tools hold the word, and how many tools there are in all. */
  df(id: number): number {
    return this.#df[id] ?? 0;
  }

  get documents(): number {
    return this.#documents;
  }

  idf(id: number): number {
    const df = this.#df[id] ?? 0;
    return Math.log(1 + (this.#documents - df + 0.5) / (df + 0.5));
  }

  /**
   * The task's own terms (and related words, at their weights) that tools' answers hold, each
   * weighted by its inverse document frequency among answers, and whether most answers hold it.
   */
  answerLookup(query: Query): Array<{ id: number; weight: number; own: boolean; common: boolean }> {
    const out: Array<{ id: number; weight: number; own: boolean; common: boolean }> = [];
    for (const [word, weight] of query.terms) {
      const id = this.#ids.get(word);
      const df = id === undefined ? 0 : (this.#answerDf[id] ?? 0);
      if (id === undefined || df <= 0) continue;
      const idf = Math.log(1 + (this.#documents - df + 0.5) / (df + 0.5));
      out.push({ id, weight: weight * idf, own: weight === 1, common: df > this.#documents * COMMON_SHARE });
    }
    return out;
  }

  /** The weighted term ids of a task: its words, the longer words they begin, near spellings. */
  lookup(query: Query): Array<{ id: number; weight: number; own: boolean }> {
    const found = new Map<number, { id: number; weight: number; own: boolean }>();
    for (const [word, weight] of query.terms) {
      const id = this.#ids.get(word);
      if (id !== undefined && (this.#df[id] ?? 0) > 0) found.set(id, { id, weight, own: weight === 1 });
      else {
        const spelled = query.spelled.get(word);
        for (const near of spelled ? this.#nearSpellings(spelled, word) : []) {
          const nearId = this.#ids.get(near) as number;
          if ((found.get(nearId)?.weight ?? 0) < weight * SPELLING_WEIGHT)
            found.set(nearId, { id: nearId, weight: weight * SPELLING_WEIGHT, own: weight === 1 });
        }
      }
      if (word.length < PREFIX_MIN_LENGTH) continue;
      for (const longer of this.#beginningWith(word)) {
        const longerId = this.#ids.get(longer) as number;
        if ((this.#df[longerId] ?? 0) <= 0) continue;
        const prefixWeight = weight * PREFIX_WEIGHT;
        if ((found.get(longerId)?.weight ?? 0) < prefixWeight)
          found.set(longerId, { id: longerId, weight: prefixWeight, own: false });
      }
    }
    return [...found.values()];
  }

  /**
   * Words of the vocabulary one edit (insertion, deletion, substitution, swap of neighbours) from
   * the word as written or as stemmed, sharing its first letter: typos rarely touch it, and the
   * sorted vocabulary then needs reading only over that letter's range.
   */
  #nearSpellings(written: string, stemmed: string): string[] {
    if (this.#recent.length > 0) this.#mergeRecent();
    const sorted = this.#sorted;
    const first = written[0] as string;
    const out: string[] = [];
    for (let i = lowerBound(sorted, first); i < sorted.length; i += 1) {
      const candidate = sorted[i] as string;
      if (candidate[0] !== first) break;
      if ((this.#df[this.#ids.get(candidate) as number] ?? 0) <= 0) continue;
      if (oneEdit(written, candidate) || oneEdit(stemmed, candidate)) out.push(candidate);
      if (out.length >= SPELLING_MAX_WORDS) break;
    }
    return out;
  }

  #beginningWith(word: string): string[] {
    const sorted = this.#sorted;
    const low = lowerBound(sorted, word);
    const out: string[] = [];
    const keep = (candidate: string) =>
      candidate !== word &&
      candidate.length <= word.length + PREFIX_MAX_EXTRA &&
      out.length < PREFIX_MAX_WORDS;
    for (let i = low; i < sorted.length && (sorted[i] as string).startsWith(word); i += 1)
      if (keep(sorted[i] as string)) out.push(sorted[i] as string);
    for (const candidate of this.#recent)
      if (candidate.startsWith(word) && keep(candidate)) out.push(candidate);
    return out;
  }

  /**
   * New words wait in a short unsorted list and are merged into the sorted one in batches: sorting
   * the whole vocabulary (300,000 words for the APIs.guru collection) on every registration would
   * hold the event loop for a third of a second.
   */
  #mergeRecent(): void {
    const recent = this.#recent.sort();
    const merged: string[] = [];
    let i = 0;
    let j = 0;
    const sorted = this.#sorted;
    while (i < sorted.length || j < recent.length) {
      if (j >= recent.length || (i < sorted.length && (sorted[i] as string) < (recent[j] as string)))
        merged.push(sorted[i++] as string);
      else merged.push(recent[j++] as string);
    }
    this.#sorted = merged;
    this.#recent = [];
  }
}

/** The first index of `sorted` whose word is not before `word`. */
function lowerBound(sorted: readonly string[], word: string): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((sorted[middle] as string) < word) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Whether `b` is `a` with one letter inserted, deleted, replaced, or two neighbours swapped. */
export function oneEdit(a: string, b: string): boolean {
  if (a === b || Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i += 1;
  if (a.length === b.length) {
    if (a.slice(i + 1) === b.slice(i + 1)) return true;
    return a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2);
  }
  return a.length > b.length ? a.slice(i + 1) === b.slice(i) : a.slice(i) === b.slice(i + 1);
}

/** One ranked tool. */
export interface Hit {
  appId: string;
  name: string;
  /** Shown score, in (0, 1]; hits are ordered by it, ties in catalog order. */
  score: number;
  /** Position of the app in the searched list (catalog order of apps) and of the tool in the app. */
  appIndex: number;
  doc: number;
}

/** The best `limit` tools of `segments` (in catalog order of apps) for the task, best first. */
export function rank(
  vocabulary: SharedVocabulary,
  segments: readonly Segment[],
  query: Query,
  limit: number,
): Hit[] {
  const heap = new HitHeap(limit);
  const words = vocabulary.lookup(query);
  const ownTotal = words.filter((word) => word.own).length;
  // Rare words first. A word that many tools hold ("get", "list", "create") adds little to tell
  // tools apart: in a large search, when the rarer words already reach enough tools, it only adds
  // to their scores and brings in no tool of its own (over 125,000 tools, such words touched most
  // of them: 49 ms a query at the median, 9 ms with this).
  const total = vocabulary.documents;
  const weighted = words
    .map((word) => ({
      ...word,
      weight: word.weight * vocabulary.idf(word.id),
      common: vocabulary.df(word.id) > total * COMMON_SHARE,
    }))
    .sort((a, b) => Number(a.common) - Number(b.common));
  const positions = segments.map((segment) => weighted.map((word) => findTerm(segment, word.id)));
  let reach = 0;
  segments.forEach((segment, index) => {
    weighted.forEach((word, w) => {
      const at = (positions[index] as number[])[w] as number;
      if (!word.common && at >= 0)
        reach += (segment.offsets[at + 1] as number) - (segment.offsets[at] as number);
    });
  });
  const searched = segments.reduce((sum, segment) => sum + segment.names.length, 0);
  const commonAddOnly = searched > ADD_ONLY_FROM && reach >= limit * RARE_REACH;
  const factors = methodFactors(query);
  // Many things to read (not to delete or change): a collection's GET answers them.
  const readsMany = query.many && (query.methods.size === 0 || query.methods.has('GET'));
  const named = namedApps(segments, words);
  // A question reads what tools answer; in a large search, not the words most answers hold ("id",
  // "name", "created"): at their weight they add next to nothing, and their postings are most of
  // the collection's answers (a question's ranking took about a third longer across the APIs.guru
  // collection with them).
  const answerWords = query.question
    ? vocabulary.answerLookup(query).filter((word) => !(word.common && commonAddOnly))
    : [];
  let scores = new Float64Array(256);
  let matched = new Uint8Array(256);
  let inName = new Uint8Array(256);
  segments.forEach((segment, appIndex) => {
    const size = segment.names.length;
    if (scores.length < size) {
      scores = new Float64Array(size);
      matched = new Uint8Array(size);
      inName = new Uint8Array(size);
    }
    const exact = query.exact === null ? -1 : exactDoc(segment, query.exact);
    if (exact >= 0) heap.offer(1, appIndex, exact, segment);
    const touched: number[] = [];
    const found = positions[appIndex] as number[];
    for (let w = 0; w < weighted.length; w += 1) {
      const word = weighted[w] as (typeof weighted)[number];
      const at = found[w] as number;
      if (at < 0) continue;
      const addOnly = word.common && commonAddOnly;
      if (addOnly && touched.length === 0) continue;
      const end = segment.offsets[at + 1] as number;
      for (let p = segment.offsets[at] as number; p < end; p += 1) {
        const doc = segment.docs[p] as number;
        if (scores[doc] === 0) {
          if (addOnly) continue;
          touched.push(doc);
        }
        const weight = segment.weights[p] as number;
        scores[doc] = (scores[doc] as number) + word.weight * Math.abs(weight);
        if (word.own) matched[doc] = (matched[doc] as number) + 1;
        if (weight < 0) inName[doc] = (inName[doc] as number) + 1;
      }
    }
    // A question: the field names of what each tool answers, after the other fields.
    const answers = segment.answers;
    for (const word of answerWords) {
      const at = findTerm(answers, word.id);
      if (at < 0) continue;
      const own = word.own ? findTerm(segment, word.id) : -1;
      const end = answers.offsets[at + 1] as number;
      for (let p = answers.offsets[at] as number; p < end; p += 1) {
        const doc = answers.docs[p] as number;
        if (scores[doc] === 0) touched.push(doc);
        scores[doc] = (scores[doc] as number) + ANSWER_WEIGHT * word.weight * (answers.weights[p] as number);
        // A word of the task counts once for its coverage, in the tool's other fields or its answer.
        if (word.own && !holds(segment, own, doc)) matched[doc] = (matched[doc] as number) + 1;
      }
    }
    const appFactor = named.has(appIndex) ? APP_NAMED : 1;
    for (const doc of touched) {
      const raw =
        appFactor *
        (scores[doc] as number) *
        (factors.get(segment.methods[doc] as string) ?? 1) *
        (readsMany ? collectionRead(segment, doc) : 1) *
        coverage(matched[doc] as number, ownTotal) *
        nameCoverage(inName[doc] as number, segment.nameSizes[doc] as number);
      scores[doc] = 0;
      matched[doc] = 0;
      inName[doc] = 0;
      if (doc !== exact) heap.offer(shown(raw), appIndex, doc, segment);
    }
  });
  return heap.sorted();
}

/**
 * The segments (by index) of the apps the task names by one of its own words: a word of an app's
 * id or provider label that few of the searched apps share.
 */
function namedApps(
  segments: readonly Segment[],
  words: ReadonlyArray<{ id: number; own: boolean }>,
): Set<number> {
  const own = new Set(words.filter((word) => word.own).map((word) => word.id));
  const apps = new Map<number, number[]>();
  segments.forEach((segment, index) => {
    for (const id of segment.appTermIds) {
      if (!own.has(id)) continue;
      const list = apps.get(id) ?? [];
      list.push(index);
      apps.set(id, list);
    }
  });
  const named = new Set<number>();
  for (const list of apps.values())
    if (list.length <= APP_NAME_MAX_APPS) for (const index of list) named.add(index);
  return named;
}

/** The factor of each method for the task's action (1 for any method not listed). */
function methodFactors(query: Query): Map<string, number> {
  const factors = new Map<string, number>();
  for (const method of query.weakerMethods) factors.set(method, METHOD_WEAKER);
  for (const method of query.methods) factors.set(method, METHOD_MATCH);
  return factors;
}

/** The factor of a tool for a task that reads many things: a collection GET is preferred. */
function collectionRead(segment: Segment, doc: number): number {
  return segment.collections[doc] === 1 && segment.methods[doc] === 'GET' ? COLLECTION_READ : 1;
}

/** Whether the postings at `at` (a term's place in the segment, -1 for none) hold `doc`. */
function holds(segment: Segment, at: number, doc: number): boolean {
  if (at < 0) return false;
  let low = segment.offsets[at] as number;
  let high = (segment.offsets[at + 1] as number) - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const value = segment.docs[middle] as number;
    if (value === doc) return true;
    if (value < doc) low = middle + 1;
    else high = middle - 1;
  }
  return false;
}

/** A mild preference for tools that hold more of the task's own words. */
function coverage(matched: number, total: number): number {
  return total === 0 ? 1 : Math.sqrt((1 + matched) / (1 + total));
}

/**
 * A mild preference for tools whose name the task covers: "create an issue" is `issues_create`
 * more than `orgs_create-issue-field`, though both names hold both words.
 */
function nameCoverage(matched: number, size: number): number {
  return size === 0
    ? NAME_COVERAGE_FLOOR
    : NAME_COVERAGE_FLOOR + (1 - NAME_COVERAGE_FLOOR) * Math.min(1, matched / size);
}

function shown(raw: number): number {
  return Math.round((raw / (raw + SCALE)) * 10_000) / 10_000;
}

/** The doc whose name (or composite id) is the task, lower-case; -1 when none. */
function exactDoc(segment: Segment, exact: string): number {
  if (!segment.byName) {
    segment.byName = new Map(segment.names.map((name, doc) => [name.toLowerCase(), doc]));
  }
  const prefix = `${segment.appId.toLowerCase()}:::`;
  return segment.byName.get(exact.startsWith(prefix) ? exact.slice(prefix.length) : exact) ?? -1;
}

/** The `limit` best hits seen, in a binary heap whose root is the worst kept. */
class HitHeap {
  readonly #items: Hit[] = [];
  constructor(private readonly limit: number) {}

  /** Keeps the hit when it is among the best so far; allocates nothing when it is not. */
  offer(score: number, appIndex: number, doc: number, segment: Segment): void {
    if (this.limit <= 0) return;
    const items = this.#items;
    if (items.length === this.limit) {
      const worst = items[0] as Hit;
      if (!better(score, appIndex, doc, worst)) return;
      items[0] = { appId: segment.appId, name: segment.names[doc] as string, score, appIndex, doc };
      this.#down(0);
      return;
    }
    items.push({ appId: segment.appId, name: segment.names[doc] as string, score, appIndex, doc });
    this.#up(items.length - 1);
  }

  sorted(): Hit[] {
    return [...this.#items].sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0));
  }

  #up(index: number): void {
    const items = this.#items;
    while (index > 0) {
      const parent = (index - 1) >>> 1;
      if (!before(items[parent] as Hit, items[index] as Hit)) break;
      [items[parent], items[index]] = [items[index] as Hit, items[parent] as Hit];
      index = parent;
    }
  }

  #down(index: number): void {
    const items = this.#items;
    for (;;) {
      const left = 2 * index + 1;
      const right = left + 1;
      let worst = index;
      if (left < items.length && before(items[worst] as Hit, items[left] as Hit)) worst = left;
      if (right < items.length && before(items[worst] as Hit, items[right] as Hit)) worst = right;
      if (worst === index) return;
      [items[worst], items[index]] = [items[index] as Hit, items[worst] as Hit];
      index = worst;
    }
  }
}

/** Better first: higher score, then catalog order (app, then tool). */
function better(score: number, appIndex: number, doc: number, than: Hit): boolean {
  if (score !== than.score) return score > than.score;
  if (appIndex !== than.appIndex) return appIndex < than.appIndex;
  return doc < than.doc;
}

function before(a: Hit, b: Hit): boolean {
  return better(a.score, a.appIndex, a.doc, b);
}
