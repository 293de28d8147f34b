/**
 * Text → search terms, the same way for a tool's words and for a task (docs/reference.md "Tool
 * search"): split at `_ - . /`, camelCase and anything that is not a letter or digit, lower-case,
 * drop stop words and bare numbers, and stem (Porter, from the `stemmer` package), so "issues",
 * "issue" and "Issue" meet, and so do "creating" and "create". Letters of any script are kept, so
 * a non-Latin task still finds tools whose words it shares (unstemmed).
 */
import { stemmer } from 'stemmer';
import { ACTION_METHODS, RELATED_WORDS, STOP_WORDS, SYNONYMS } from './lexicon.ts';

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
/** Weights of a word found through SYNONYMS and RELATED_WORDS, against 1 for the task's own word. */
const SYNONYM_WEIGHT = 0.9;
const RELATED_WEIGHT = 0.45;
/**
 * Weight of the words of a value the task names (`octocat/hello-world`, `#general`, `$20`,
 * `bob@example.com`): they rarely name an operation, and a rare one would otherwise outweigh
 * the words that do.
 */
const VALUE_WEIGHT = 0.3;
const VALUE_LIKE = /[/#@$%&=:"`\d]/u;

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
  /** The task as one word, lower-case, when it could be a tool's name or id (exact matches first). */
  exact: string | null;
}

const SAME = new Map<string, readonly string[]>();
for (const [word, ...same] of SYNONYMS) SAME.set(word as string, same);
const RELATED = new Map<string, readonly string[]>();
for (const [word, ...related] of RELATED_WORDS) RELATED.set(word as string, related);
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

export function readQuery(text: string): Query {
  const trimmed = text.trim();
  const query: Query = {
    terms: new Map(),
    methods: new Set(),
    weakerMethods: new Set(),
    exact: EXACT.test(trimmed) ? trimmed.toLowerCase() : null,
  };
  const add = (token: string, weight: number) => {
    const stemmed = term(token);
    if (stemmed === null) return;
    if ((query.terms.get(stemmed) ?? 0) < weight) {
      if (!query.terms.has(stemmed) && query.terms.size >= MAX_QUERY_TERMS) return;
      query.terms.set(stemmed, weight);
    }
  };
  const tokens: string[] = [];
  const values: string[] = [];
  for (const chunk of trimmed.split(/\s+/)) {
    const value = VALUE_LIKE.test(chunk.replace(/[.,;!?)]+$/, ''));
    (value ? values : tokens).push(...tokenize(chunk));
  }
  // Two words that name one thing ("bug report" is an issue) count as that thing, and each word
  // alone counts less: the report of a bug is not a report.
  const compound = new Set<number>();
  tokens.forEach((token, index) => {
    const same = index + 1 < tokens.length ? SAME.get(`${token} ${tokens[index + 1]}`) : undefined;
    if (!same) return;
    for (const word of same) add(word, 1);
    compound.add(index).add(index + 1);
  });
  tokens.forEach((token, index) => {
    add(token, compound.has(index) ? RELATED_WEIGHT : ACTIONS.has(token) ? ACTION_WORD_WEIGHT : 1);
  });
  for (const token of tokens) for (const same of SAME.get(token) ?? []) add(same, SYNONYM_WEIGHT);
  for (const token of tokens) {
    for (const related of RELATED.get(token) ?? []) add(related, RELATED_WEIGHT);
    const action = ACTIONS.get(token);
    if (action) {
      for (const method of action.methods) query.methods.add(method);
      for (const method of action.weaker) query.weakerMethods.add(method);
    }
  }
  for (const token of values) add(token, VALUE_WEIGHT);
  for (const method of query.methods) query.weakerMethods.delete(method);
  return query;
}
