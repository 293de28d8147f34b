/**
 * Text → search terms, the same way for a tool's words and for a task (docs/reference.md "Tool
 * search"): split at `_ - . /`, camelCase and anything that is not a letter or digit, lower-case,
 * drop stop words and bare numbers, and stem (Porter, from the `stemmer` package), so "issues",
 * "issue" and "Issue" meet, and so do "creating" and "create". Letters of any script are kept, so
 * a non-Latin task still finds tools whose words it shares (unstemmed).
 */
import { stemmer } from 'stemmer';
import { ACTION_METHODS, API_VERBS, IRREGULAR_VERBS, STOP_WORDS, SYNONYMS } from './lexicon.ts';
import { splitTask } from './task.ts';
import { THESAURUS } from './thesaurus.ts';

/** Longer tokens are cut (no real word is this long; it bounds the work on hostile text). */
const MAX_TOKEN = 40;
/** Terms read from one task: a 10,000-character query costs no more than a long sentence. */
export const MAX_QUERY_TERMS = 32;
/**
 * Weight of a task's verb that names an action ("open", "show", "make"): the action is weighed
 * against each operation's method; the word itself, matched in descriptions, is often another
 * sense ("only open issues are listed").
 */
const ACTION_WORD_WEIGHT = 0.6;
/** Weight of the words of a later clause ("delete the branch, it's merged"): usually a reason. */
const LATER_CLAUSE_WEIGHT = 0.5;
/** Shorter words are not looked up as misspellings (too many words are one letter from them). */
const MIN_SPELLED = 5;
/** Weights of words a task's words stand for (SYNONYMS, THESAURUS), against 1 for its own words. */
const SYNONYM_WEIGHT = 0.9;
const THESAURUS_WEIGHT = 0.7;
/** Weight of a word of a phrase of several words, on its own. */
const PHRASE_WORD_WEIGHT = 0.45;
/**
 * Weight of the words of a value the task names (`octocat/hello-world`, `#general`, `$20`,
 * `bob@example.com`): they rarely name an operation, and a rare one would otherwise outweigh
 * the words that do.
 */
const VALUE_WEIGHT = 0.3;
/** Weight of the words a value's kind stands for (`contract.pdf` → file). */
const IMPLIED_WEIGHT = 0.5;

const CAMEL = /(\p{Ll}|\p{N})(\p{Lu})/gu;
const ACRONYM = /(\p{Lu}+)(\p{Lu}\p{Ll})/gu;
const SEPARATORS = /[^\p{L}\p{N}]+/u;
const NUMBER = /^\p{N}+$/u;
const ASCII_WORD = /^[a-z]+$/;
/** "customer's" → customer, s: a lone Latin letter is never a word of its own. */
const SINGLE_LETTER = /^[a-z]$/;

/** Words of a text, lower-case, in order: `listPetsByOwner_v2` → list, pets, by, owner, v2. */
export function tokenize(text: string): string[] {
  const spaced = text.normalize('NFKC').replace(ACRONYM, '$1 $2').replace(CAMEL, '$1 $2').toLowerCase();
  const tokens: string[] = [];
  for (const token of spaced.split(SEPARATORS)) {
    if (token === '') continue;
    tokens.push(token.length > MAX_TOKEN ? token.slice(0, MAX_TOKEN) : token);
  }
  return tokens;
}

/** One token as a term, or null when it carries no meaning (a stop word, a bare number). */
export function term(token: string): string | null {
  if (STOP_WORDS.has(token) || NUMBER.test(token) || SINGLE_LETTER.test(token)) return null;
  return ASCII_WORD.test(token) ? stemmer(token) : token;
}

/** The terms of a text, in order, repeats kept (their count is the term frequency). */
export function terms(text: string): string[] {
  const out: string[] = [];
  for (const token of tokenize(text)) {
    const stemmed = term(token);
    if (stemmed !== null) out.push(stemmed);
  }
  return out;
}

/** A task, read: the terms to look for with their weights, and the methods its verbs ask for. */
export interface Query {
  /** Distinct terms with a weight (1 for the task's words, less for related words). */
  terms: Map<string, number>;
  /** Methods the task's verbs ask for; empty when it names no action. */
  methods: Set<string>;
  /** Methods that are a weaker match for those verbs. */
  weakerMethods: Set<string>;
  /**
   * The task asks for many things (a plural, "all", "every" in its first clause): a collection
   * answers it ("list all my droplets", "which repos have I starred").
   */
  many: boolean;
  /**
   * The task asks about something rather than acts on it: it opens with a question word or an
   * auxiliary ("is Karen online", "how much storage am I using") or ends with `?`, and names no
   * action but reading. It asks for a field of an answer, so what tools answer counts.
   */
  question: boolean;
  /** The task as one word, lower-case, when it could be a tool's name or id (exact matches first). */
  exact: string | null;
  /**
   * The task's own words as written (lower-case, Latin letters, long enough to be misspelt), by
   * their term: a term no tool holds is looked up as a near spelling of one ("calender").
   */
  spelled: Map<string, string>;
}

/** Phrases (word sequences, space-joined) → the words they stand for, and at which weight. */
const PHRASES = new Map<string, { words: string[]; weight: number }[]>();
const LONGEST_PHRASE = 4;
function phrase(key: string, words: string[], weight: number): void {
  const list = PHRASES.get(key) ?? [];
  list.push({ words, weight });
  PHRASES.set(key, list);
}
/** Whether a word asks for an action, in any tense ("made" as "make"). */
const isAction = (token: string) => ACTIONS.has(verbOf(token));
/** The verb of an irregular past form ("took" → "take"); any other word as it is. */
const verbOf = (token: string) => IRREGULAR_VERBS.get(token) ?? token;
/** The first words of a question: question words and the auxiliaries that open one. */
const QUESTION_OPENERS = new Set(
  'who whom whose what whats which when where why how is are am was were do does did has have had can could will would should'.split(
    ' ',
  ),
);
/** The methods of actions that only read: a question's own words ("which", "who", "show") are such. */
const READING = new Set(['GET', 'HEAD']);
/** Words that ask for every thing of a kind. */
const ALL_WORDS = new Set(['all', 'every']);
/**
 * Whether a word of a task is a plural noun: an English word ending in -s that is not a verb of
 * action ("creates"), a stop word ("this", "is"), or a singular ending (-ss, -us, -is: "access",
 * "status", "analysis").
 */
const isPlural = (token: string) =>
  ASCII_WORD.test(token) &&
  token.length > 3 &&
  token.endsWith('s') &&
  !/(ss|us|is)$/.test(token) &&
  !STOP_WORDS.has(token) &&
  !isAction(token);
/**
 * A word as phrases are matched: stemmed, stop words kept ("get rid of"), so a phrase written in
 * one form matches every form of its words ("chargeback" → "chargebacks", "crash" → "crashing").
 */
function phraseWord(token: string): string {
  const verb = verbOf(token);
  return ASCII_WORD.test(verb) ? stemmer(verb) : verb;
}
const phraseKey = (text: string) => tokenize(text).map(phraseWord).join(' ');
/** Whether a chunk ("thumbs-up", "to-do") is a known phrase, not a name ("team-ml"). */
const isPhrase = (chunk: string) => PHRASES.has(phraseKey(chunk));
/** A verb as phrases are matched (so every form of it: "created", "deleting") → its API verb (API_VERBS). */
const API_VERB = new Map(API_VERBS.map(([verb, api]) => [phraseKey(verb), api]));
for (const [word, ...same] of SYNONYMS) phrase(phraseKey(word as string), [...same], SYNONYM_WEIGHT);
for (const [said, meant] of THESAURUS)
  for (const key of said.split('|')) phrase(phraseKey(key), meant.split(' '), THESAURUS_WEIGHT);

/**
 * The particles of phrasal verbs, which English lets stand after the verb's object ("take
 * Wonderwall off the playlist", "tear the namespace down", "turn notifications off").
 */
const PARTICLES = new Set(['up', 'down', 'off', 'out', 'away', 'back', 'over', 'on']);
/** How many words may stand between a phrasal verb and its particle. */
const PARTICLE_GAP = 3;
/** Verb → the particles that make a known phrase of two words with it ("tear" → down). */
const PHRASAL = new Map<string, Set<string>>();
for (const key of PHRASES.keys()) {
  const [verb, particle, ...more] = key.split(' ');
  if (verb === undefined || particle === undefined || more.length > 0 || !PARTICLES.has(particle)) continue;
  const particles = PHRASAL.get(verb) ?? new Set();
  particles.add(particle);
  PHRASAL.set(verb, particles);
}

const ACTIONS = new Map<string, { methods: string[]; weaker: string[] }>();
for (const action of ACTION_METHODS)
  for (const word of action.words) {
    const known = ACTIONS.get(word);
    ACTIONS.set(word, {
      methods: [...(known?.methods ?? []), ...action.methods],
      weaker: [...(known?.weaker ?? []), ...(action.weaker ?? [])],
    });
  }

const EXACT = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,400}$/;

/**
 * Where the particle of a phrasal verb at `at` stands apart from it, within a few words and the
 * same clause ("take Wonderwall off", "tear the namespace down"); null when none does. A verb
 * that means something alone takes a particle apart only at the clause's end: in "kick Bob off
 * the team" the "off" begins "off the team", and "kick" is not "kick off" (start).
 */
function separatedParticle(keys: readonly string[], at: number, clauseEnd: number): number | null {
  const particles = PHRASAL.get(keys[at] as string);
  if (!particles) return null;
  const last = at < clauseEnd ? clauseEnd : keys.length;
  const end = Math.min(last, at + 2 + PARTICLE_GAP);
  const alone = PHRASES.has(keys[at] as string);
  for (let i = at + 2; i < end; i += 1)
    if (particles.has(keys[i] as string) && (!alone || i === last - 1)) return i;
  return null;
}

export function readQuery(text: string): Query {
  const trimmed = text.trim();
  const query: Query = {
    terms: new Map(),
    methods: new Set(),
    weakerMethods: new Set(),
    many: false,
    question: false,
    exact: EXACT.test(trimmed) ? trimmed.toLowerCase() : null,
    spelled: new Map(),
  };
  const add = (token: string, weight: number) => {
    const stemmed = term(token);
    if (stemmed === null) return;
    if ((query.terms.get(stemmed) ?? 0) < weight) {
      if (!query.terms.has(stemmed) && query.terms.size >= MAX_QUERY_TERMS) return;
      query.terms.set(stemmed, weight);
    }
  };
  const act = (word: string) => {
    const action = ACTIONS.get(verbOf(word));
    if (!action) return;
    for (const method of action.methods) query.methods.add(method);
    for (const method of action.weaker) query.weakerMethods.add(method);
  };
  // Where the task names an action (a word, or a phrase whose meaning begins with one), in order.
  const actions: { at: number; words: string[] }[] = [];
  const task = splitTask(trimmed, isPhrase);
  const tokens = task.words.flatMap((chunk) => tokenize(chunk));
  const values = task.values.flatMap((chunk) => tokenize(chunk));
  // The longest known phrase at each place wins ("kick off" is not "kick"). The words of a phrase
  // of several words count less on their own (a bug report is an issue, not a report); what the
  // phrase stands for counts at the phrase's weight, and its first word names the action.
  const keys = tokens.map(phraseWord);
  const firstClause = task.words.slice(0, task.firstClause).flatMap((chunk) => tokenize(chunk)).length;
  const ownWeight: number[] = tokens.map(
    (token, index) =>
      (isAction(token) ? ACTION_WORD_WEIGHT : 1) * (index < firstClause ? 1 : LATER_CLAUSE_WEIGHT),
  );
  const meant: { words: string[]; weight: number }[] = [];
  const inPhrase = new Set<number>();
  const phraseAt = (places: number[], found: { words: string[]; weight: number }[]) => {
    meant.push(...found);
    for (const i of places) {
      ownWeight[i] = PHRASE_WORD_WEIGHT;
      inPhrase.add(i);
    }
    const verbs = found.map(({ words }) => words[0] as string).filter(isAction);
    if (verbs.length > 0) actions.push({ at: places[0] as number, words: verbs });
  };
  for (let at = 0; at < tokens.length; at += 1) {
    if (inPhrase.has(at)) continue;
    let length = Math.min(LONGEST_PHRASE, tokens.length - at);
    for (; length > 1; length -= 1) {
      const found = PHRASES.get(keys.slice(at, at + length).join(' '));
      if (!found) continue;
      phraseAt(
        Array.from({ length }, (_, i) => at + i),
        found,
      );
      break;
    }
    if (length > 1) {
      at += length - 1;
      continue;
    }
    // "take Wonderwall off": a phrasal verb whose particle stands after its object.
    const apart = separatedParticle(keys, at, firstClause);
    if (apart !== null) phraseAt([at, apart], PHRASES.get(`${keys[at]} ${keys[apart]}`) ?? []);
    else meant.push(...(PHRASES.get(keys[at] as string) ?? []));
  }
  tokens.forEach((token, index) => {
    add(token, ownWeight[index] as number);
    const apiVerb = API_VERB.get(keys[index] as string);
    if (apiVerb !== undefined) add(apiVerb, ownWeight[index] as number);
    const stemmed = term(token);
    if (stemmed !== null && token.length >= MIN_SPELLED && ASCII_WORD.test(token))
      query.spelled.set(stemmed, token);
    if (!inPhrase.has(index) && isAction(token)) actions.push({ at: index, words: [token] });
  });
  query.many = tokens.slice(0, firstClause).some((token) => ALL_WORDS.has(token) || isPlural(token));
  // The first word of action names the action: an imperative begins with its verb, and the
  // action words after it mostly describe the thing acted on ("list the open pull requests",
  // "create a new list"). The first clause says what to do; a later one only when it does not.
  actions.sort((a, b) => a.at - b.at);
  const named = actions.find((action) => action.at < firstClause) ?? actions[0];
  for (const word of named?.words ?? []) act(word);
  const opener = tokenize(trimmed)[0];
  query.question =
    (trimmed.endsWith('?') || (opener !== undefined && QUESTION_OPENERS.has(opener))) &&
    actions.every(({ words }) =>
      words.every((word) => ACTIONS.get(verbOf(word))?.methods.every((method) => READING.has(method))),
    );
  for (const { words, weight } of meant) for (const word of words) add(word, weight);
  for (const token of values) add(token, VALUE_WEIGHT);
  for (const word of task.implied) add(word, IMPLIED_WEIGHT);
  for (const method of query.methods) query.weakerMethods.delete(method);
  return query;
}
