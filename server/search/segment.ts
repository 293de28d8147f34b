/**
 * An app's search segment: its tools' words as an inverted index with BM25F weights, built once
 * per registration on the compile worker (never on the request path) and stored beside the
 * catalog (`apps.search`). A server reads segments, not catalogs, to search: searching the whole
 * APIs.guru collection (125,000 tools) needs its segments in memory (tens of megabytes), not its
 * catalogs (gigabytes).
 *
 * Each posting holds the saturated, field-weighted term frequency of BM25F (Robertson & Zaragoza,
 * "The Probabilistic Relevance Framework: BM25 and Beyond", §3.1): fields are weighted and
 * length-normalized per field, summed, then saturated once. The inverse document frequency is
 * applied at query time over every segment loaded, so scores of different apps compare.
 */
import { CATALOG_FORMAT } from '../catalog/format.ts';
import { terms } from './analyze.ts';
import { APP_NOISE } from './lexicon.ts';

/** BM25 saturation: how fast repeated words stop adding. */
const K1 = 1.2;

/** Field weights and length normalization (b). The operation's own name and summary weigh most. */
const FIELDS = {
  name: { weight: 3, b: 0.6 },
  title: { weight: 2.5, b: 0.6 },
  tags: { weight: 1.2, b: 0.3 },
  path: { weight: 1.5, b: 0.3 },
  method: { weight: 0.5, b: 0 },
  description: { weight: 0.6, b: 0.75 },
  params: { weight: 0.6, b: 0.5 },
  /** The parameters' descriptions: plain words about what the operation acts on. */
  paramText: { weight: 0.3, b: 0.75 },
  /** What the document says around the operation: its tags' descriptions, what it answers. */
  context: { weight: 0.3, b: 0.75 },
  /**
   * The values the parameters and body properties allow (`state: open|closed|all`,
   * `status: canceled|completed`): words a task says ("cancel", "archived") that the operation
   * names nowhere else. Low: a value is a choice the tool offers, not what it does (0.2–0.6 rank
   * the dev tasks within one of each other; BENCHMARKS.md "# Tool search").
   */
  enums: { weight: 0.4, b: 0.5 },
  app: { weight: 1, b: 0 },
} as const;
type Field = keyof typeof FIELDS;
const FIELD_NAMES = Object.keys(FIELDS) as Field[];

/** Words of the method, so "delete" in a task meets DELETE operations whose names say "destroy". */
const METHOD_WORDS: Record<string, string> = {
  GET: 'get list',
  HEAD: 'get',
  POST: 'create',
  PUT: 'update replace',
  PATCH: 'update',
  DELETE: 'delete',
};

/**
 * Length normalization of the answer's field names, indexed apart from the other fields: a
 * resource's create, update and read tools answer the same object, so its fields tell an action
 * nothing, and only a question about the answer reads them (rank.ts weighs them at query time).
 */
const ANSWERS_B = 0.5;

/** Descriptions are read this far: the first sentences say what an operation does. */
const DESCRIPTION_CHARS = 1_000;
const PARAMETER_DESCRIPTION_CHARS = 200;
/**
 * An enum of more values is a code list (countries, currencies, time zones, event types) whose
 * words would match any task that names one; a tool's values are read up to `ENUM_VALUES` in all.
 */
const ENUM_MAX_VALUES = 20;
const ENUM_VALUES = 40;
/** HTTP methods: an enum of them (a webhook's method) would read as actions in a task. */
const HTTP_METHODS = new Set([
  'get',
  'head',
  'post',
  'put',
  'patch',
  'delete',
  'options',
  'trace',
  'connect',
]);
const URL = /\bhttps?:\/\/\S+/g;
const MARKUP = /<[^>]{0,200}>|!?\[([^\]]{0,200})\]\([^)]{0,500}\)/g;

/** What a segment is built from: a tool as the catalog derives it. */
export interface SearchableTool {
  name: string;
  method: string;
  pathTemplate: string;
  summary: string | null;
  operationDescription: string | null;
  tags?: string[];
  parametersSchema: Record<string, unknown>;
  /** What the document says around the operation (server/search/context.ts). */
  context?: string;
  /** The property names of what a success answers (server/search/context.ts), kept apart. */
  answers?: readonly string[];
}

/** The app's own words (its id, provider label and document title), for searches across apps. */
export interface SearchableApp {
  appId: string;
  provider: string;
  title?: string | null;
}

/** A segment as stored: JSON text. */
interface StoredSegment {
  format: number;
  names: string[];
  methods: string[];
  terms: string[];
  /**
   * Per term: `[doc, weight × 1000, doc, weight × 1000, …]`, docs ascending; the weight is
   * negative when the term is one of the tool name's own words.
   */
  postings: number[][];
  /** Per doc: how many distinct words its name has (for how much of a name a task covers). */
  nameSizes: number[];
  /** The words that name the app itself (its id and provider label): a task that says one means this app. */
  app: string[];
  /** The docs whose path ends in a literal segment (`/repos/{owner}/{repo}/issues`): collections. */
  collections: number[];
  /** The words of what each tool answers (its success's property names), and their postings as `postings`'. */
  answerTerms: string[];
  answerPostings: number[][];
}

/** The inverted index of an app's tools, as JSON text (built on the compile worker). */
export function buildSegment(tools: readonly SearchableTool[], app: SearchableApp): string {
  const appTerms = terms(`${app.appId} ${app.provider} ${app.title ?? ''}`).filter(
    (word) => !APP_NOISE.has(word),
  );
  const naming = terms(`${app.appId} ${app.provider}`).filter((word) => !APP_NOISE.has(word));
  const documents = tools.map((tool) => fieldTerms(tool, appTerms));
  const average = {} as Record<Field, number>;
  for (const field of FIELD_NAMES) {
    const total = documents.reduce((sum, doc) => sum + doc[field].length, 0);
    average[field] = Math.max(1, total / Math.max(1, documents.length));
  }
  const postings = new Map<string, number[]>();
  documents.forEach((doc, index) => {
    const weights = new Map<string, number>();
    for (const field of FIELD_NAMES) {
      const words = doc[field];
      if (words.length === 0) continue;
      const { weight, b } = FIELDS[field];
      const norm = weight / (1 - b + (b * words.length) / average[field]);
      for (const word of words) weights.set(word, (weights.get(word) ?? 0) + norm);
    }
    const inName = new Set(doc.name);
    for (const [word, tf] of weights) {
      let list = postings.get(word);
      if (!list) {
        list = [];
        postings.set(word, list);
      }
      const scaled = storedWeight(tf);
      list.push(index, inName.has(word) ? -scaled : scaled);
    }
  });
  const sorted = [...postings.keys()].sort();
  const answers = answerPostings(tools);
  const answerSorted = [...answers.keys()].sort();
  const stored: StoredSegment = {
    format: CATALOG_FORMAT,
    names: tools.map((tool) => tool.name),
    methods: tools.map((tool) => tool.method.toUpperCase()),
    terms: sorted,
    postings: sorted.map((word) => postings.get(word) as number[]),
    nameSizes: documents.map((doc) => new Set(doc.name).size),
    app: [...new Set(naming)],
    collections: tools.flatMap((tool, doc) => (endsInLiteral(tool.pathTemplate) ? [doc] : [])),
    answerTerms: answerSorted,
    answerPostings: answerSorted.map((word) => answers.get(word) as number[]),
  };
  return JSON.stringify(stored);
}

/** A field-weighted term frequency as a posting stores it: saturated once (BM25), × 1000, at least 1. */
function storedWeight(tf: number): number {
  return Math.max(1, Math.round(((tf * (K1 + 1)) / (tf + K1)) * 1000));
}

/** The answer's field names as postings of their own: `[doc, saturated tf × 1000, …]` per word. */
function answerPostings(tools: readonly SearchableTool[]): Map<string, number[]> {
  const documents = tools.map((tool) => terms((tool.answers ?? []).join(' ')));
  const average = Math.max(
    1,
    documents.reduce((sum, words) => sum + words.length, 0) / Math.max(1, documents.length),
  );
  const postings = new Map<string, number[]>();
  documents.forEach((words, doc) => {
    const norm = 1 / (1 - ANSWERS_B + (ANSWERS_B * words.length) / average);
    const counts = new Map<string, number>();
    for (const word of words) counts.set(word, (counts.get(word) ?? 0) + norm);
    for (const [word, tf] of counts) {
      const list = postings.get(word) ?? [];
      list.push(doc, storedWeight(tf));
      postings.set(word, list);
    }
  });
  return postings;
}

/**
 * Whether a path names a collection rather than one of its members: its last segment is a word,
 * not a placeholder (`/repos/{owner}/{repo}/issues`, not `…/issues/{issue_number}`).
 */
function endsInLiteral(pathTemplate: string): boolean {
  const last = pathTemplate.split('/').findLast((segment) => segment !== '');
  return last !== undefined && !/^\{.*\}$/.test(last);
}

/** Text without URLs and markup (HTML tags, Markdown links keep their words). */
function plain(text: string): string {
  return text.replace(URL, ' ').replace(MARKUP, ' $1 ');
}

function fieldTerms(tool: SearchableTool, appTerms: string[]): Record<Field, string[]> {
  const description = plain((tool.operationDescription ?? '').slice(0, DESCRIPTION_CHARS));
  const literal: string[] = [];
  const placeholders: string[] = [];
  for (const segment of tool.pathTemplate.split('/')) {
    if (/^\{.*\}$/.test(segment)) placeholders.push(segment);
    else literal.push(segment);
  }
  return {
    name: nameTerms(tool),
    title: terms(tool.summary ?? firstSentence(description)),
    tags: terms((tool.tags ?? []).join(' ')),
    path: terms(literal.join(' ')),
    method: terms(METHOD_WORDS[tool.method.toUpperCase()] ?? ''),
    description: terms(description),
    params: terms([...placeholders, ...parameterNames(tool.parametersSchema)].join(' ')),
    paramText: terms(parameterDescriptions(tool.parametersSchema).join(' ')),
    context: terms(plain(tool.context ?? '')),
    enums: terms(enumValues(tool.parametersSchema).join(' ')),
    app: appTerms,
  };
}

/**
 * The words of a tool's name, without a leading method word that repeats its method
 * (`PostRefunds` → refund): the method is weighed apart, and the name's other words say what
 * the tool is about.
 */
function nameTerms(tool: SearchableTool): string[] {
  const words = terms(tool.name);
  const method = tool.method.toLowerCase();
  return words.length > 1 && words[0] === method ? words.slice(1) : words;
}

/** A description's first sentence stands in for a missing summary (Stripe's operations have none). */
function firstSentence(text: string): string {
  const plain = text.trim();
  const end = plain.search(/[.!?](\s|$)|\n/);
  return (end < 0 ? plain : plain.slice(0, end)).slice(0, 160);
}

/** The names a caller fills in: the tool's parameters and its body's top-level properties. */
function parameterNames(schema: Record<string, unknown>): string[] {
  const names: string[] = [];
  const properties = schema.properties;
  if (!properties || typeof properties !== 'object') return names;
  for (const [key, value] of Object.entries(properties)) {
    if (key !== 'body') names.push(key);
    else names.push(...Object.keys(bodyProperties(schema, value)));
  }
  return names.slice(0, 60);
}

/**
 * What the parameters' own descriptions say ("Reaction (emoji) name."): documents often explain
 * there, in plain words, what the operation acts on. Read at a low weight, the first sentences of
 * at most 30 parameters.
 */
function parameterDescriptions(schema: Record<string, unknown>): string[] {
  const out: string[] = [];
  const properties = schema.properties;
  if (!properties || typeof properties !== 'object') return out;
  const take = (value: unknown) => {
    const d = (value as { description?: unknown } | undefined)?.description;
    if (typeof d === 'string') out.push(plain(d.slice(0, PARAMETER_DESCRIPTION_CHARS)));
  };
  for (const [key, value] of Object.entries(properties)) {
    if (key !== 'body') take(value);
    else for (const inner of Object.values(bodyProperties(schema, value))) take(inner);
  }
  return out.slice(0, 30);
}

/**
 * The string values of the parameters' and the body's top-level properties' enums (or of their
 * array items'), at most `ENUM_VALUES`, leaving out code lists and enums of HTTP methods.
 */
function enumValues(schema: Record<string, unknown>): string[] {
  const out: string[] = [];
  const properties = schema.properties;
  if (!properties || typeof properties !== 'object') return out;
  const take = (value: unknown) => {
    const target = defined(schema, value) as { enum?: unknown; items?: unknown } | undefined;
    const values = Array.isArray(target?.enum)
      ? target.enum
      : (defined(schema, target?.items) as { enum?: unknown } | undefined)?.enum;
    if (!Array.isArray(values) || values.length > ENUM_MAX_VALUES) return;
    const words = values.filter((v): v is string => typeof v === 'string');
    if (words.length > 0 && words.every((word) => HTTP_METHODS.has(word.toLowerCase()))) return;
    out.push(...words);
  };
  for (const [key, value] of Object.entries(properties)) {
    if (key !== 'body') take(value);
    else for (const inner of Object.values(bodyProperties(schema, value))) take(inner);
  }
  return out.slice(0, ENUM_VALUES);
}

/** A schema, through one `$ref` into the tool's `$defs` (how the catalog shares schemas). */
function defined(schema: Record<string, unknown>, value: unknown): unknown {
  if (!value || typeof value !== 'object') return undefined;
  const ref = (value as { $ref?: unknown }).$ref;
  return typeof ref === 'string' && ref.startsWith('#/$defs/')
    ? (schema.$defs as Record<string, unknown> | undefined)?.[
        ref.slice('#/$defs/'.length).replaceAll('~1', '/').replaceAll('~0', '~')
      ]
    : value;
}

/** A body schema's properties, through one `$ref` into the tool's `$defs` (how the catalog shares schemas). */
function bodyProperties(schema: Record<string, unknown>, body: unknown): Record<string, unknown> {
  const properties = (defined(schema, body) as { properties?: unknown } | undefined)?.properties;
  return properties && typeof properties === 'object' ? (properties as Record<string, unknown>) : {};
}

/** A segment in memory: compact typed arrays, its terms as ids of the shared vocabulary. */
export interface Segment {
  readonly appId: string;
  /** Tool names in catalog order (the doc number is the index). */
  readonly names: readonly string[];
  /** Upper-case method per doc. */
  readonly methods: readonly string[];
  /** Vocabulary ids of the terms, ascending; `offsets[i]…offsets[i+1]` are term i's postings. */
  readonly termIds: Int32Array;
  readonly offsets: Uint32Array;
  readonly docs: Uint32Array;
  /** Per posting: the BM25F weight, negative when the term is one of the tool name's words. */
  readonly weights: Float32Array;
  /** Per doc: the number of distinct words of its name. */
  readonly nameSizes: Uint8Array;
  /** Vocabulary ids of the words that name the app (its id and provider label). */
  readonly appTermIds: readonly number[];
  /** Per doc: 1 when its path ends in a literal segment (a collection), else 0. */
  readonly collections: Uint8Array;
  /** The postings of what each tool answers, kept apart: rank.ts reads them for questions only. */
  readonly answers: Postings;
  /** Lower-case tool name → doc, for exact matches; built on first use. */
  byName?: Map<string, number>;
}

/** Postings of a field kept apart, as the segment's own: term ids ascending, offsets, docs, weights. */
export interface Postings {
  readonly termIds: Int32Array;
  readonly offsets: Uint32Array;
  readonly docs: Uint32Array;
  readonly weights: Float32Array;
}

/** Term ids shared by every segment of a process, and how many documents hold each term. */
export interface Vocabulary {
  idOf(term: string): number;
}

/** A stored segment → memory, or null when it is unreadable or of another format. */
export function openSegment(appId: string, text: string, vocabulary: Vocabulary): Segment | null {
  let stored: StoredSegment;
  try {
    stored = JSON.parse(text) as StoredSegment;
  } catch {
    return null;
  }
  if (
    stored?.format !== CATALOG_FORMAT ||
    !Array.isArray(stored.terms) ||
    !Array.isArray(stored.postings) ||
    !Array.isArray(stored.nameSizes) ||
    !Array.isArray(stored.app) ||
    !Array.isArray(stored.collections) ||
    !Array.isArray(stored.answerTerms) ||
    !Array.isArray(stored.answerPostings)
  )
    return null;
  const { termIds, offsets, docs, weights } = openPostings(stored.terms, stored.postings, vocabulary);
  const answers = openPostings(stored.answerTerms, stored.answerPostings, vocabulary);
  const nameSizes = Uint8Array.from(stored.nameSizes, (size) => Math.min(255, size));
  const appTermIds = stored.app.map((word) => vocabulary.idOf(word));
  const collections = new Uint8Array(stored.names.length);
  for (const doc of stored.collections) if (doc >= 0 && doc < collections.length) collections[doc] = 1;
  return {
    appId,
    names: stored.names,
    methods: stored.methods,
    termIds,
    offsets,
    docs,
    weights,
    nameSizes,
    appTermIds,
    collections,
    answers,
  };
}

/** Stored terms and postings → typed arrays, the terms as vocabulary ids, ascending. */
function openPostings(
  words: readonly string[],
  lists: readonly number[][],
  vocabulary: Vocabulary,
): Postings {
  const order = words.map((word, index) => ({ id: vocabulary.idOf(word), index }));
  order.sort((a, b) => a.id - b.id);
  const total = lists.reduce((sum, list) => sum + list.length / 2, 0);
  const termIds = new Int32Array(order.length);
  const offsets = new Uint32Array(order.length + 1);
  const docs = new Uint32Array(total);
  const weights = new Float32Array(total);
  let at = 0;
  order.forEach(({ id, index }, position) => {
    termIds[position] = id;
    offsets[position] = at;
    const list = lists[index] as number[];
    for (let i = 0; i < list.length; i += 2) {
      docs[at] = list[i] as number;
      weights[at] = (list[i + 1] as number) / 1000;
      at += 1;
    }
  });
  offsets[order.length] = at;
  return { termIds, offsets, docs, weights };
}

/** Where term `id`'s postings are in a segment (or in a field kept apart), or -1. */
export function findTerm(segment: Postings, id: number): number {
  const ids = segment.termIds;
  let low = 0;
  let high = ids.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const value = ids[middle] as number;
    if (value === id) return middle;
    if (value < id) low = middle + 1;
    else high = middle - 1;
  }
  return -1;
}
