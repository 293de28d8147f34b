/**
 * What a task's text holds besides the request itself (docs/reference.md "Tool search"): the
 * values it names — quoted text, what follows a colon, the name after "called", and chunks that
 * look like data (`octocat/hello-world`, `#general`, `$20`, `ana@site.io`) — and what kind of
 * thing each value is. A person writes the content of the thing to make into the request ("file
 * a ticket: checkout page times out"); those words say nothing about which operation is meant,
 * but a value's kind often does: a file name asks for a file, `owner/name` for a repository, an
 * amount for a payment, `#name` for a channel.
 */

/** A task is read this far: a 10,000-character query costs no more than a long sentence. */
const MAX_TASK_CHARS = 2_000;
/**
 * Chunks with one of these characters, a digit, or a dot between letters (`contract.pdf`,
 * `api.example.com`) are values, not words of the request.
 */
const VALUE_LIKE = /[/#@$€£¥%&=:"`\d]|\p{L}\.\p{L}/u;
/**
 * Words of time that say when, not what (a date filter or a value to fill in): "paid yesterday"
 * asks for no "yesterday" operation.
 */
const WHEN = new Set(
  'today tonight tomorrow yesterday now asap monday tuesday wednesday thursday friday saturday sunday weekend ago noon midnight'.split(
    ' ',
  ),
);
/** Words after which the next chunk is a name ("a list called Backlog"). */
const NAMING = new Set(['called', 'named', 'titled', 'labeled', 'labelled']);
/** Words that begin a second clause: what follows them is a reason or a condition. */
const CLAUSE_WORDS = new Set(['so', 'because', 'since', 'but', 'although', 'though', 'otherwise']);
/** Opening and closing quote characters; `'` only at a word's edge (not "don't"). */
const QUOTES: Record<string, string> = { '"': '"', '“': '”', '‘': '’', "'": "'", '`': '`', '«': '»' };
const TRAILING_PUNCTUATION = /[.,;!?)]+$/;

/** What a value's form says it is, and the words that kind of thing goes by in API documents. */
const KINDS: ReadonlyArray<{ test: RegExp; words: string }> = [
  { test: /^[^\s@]+@[^\s@]+\.[a-z]{2,}$/i, words: 'email' },
  { test: /^https?:\/\//i, words: 'url link' },
  { test: /^\d{1,3}(\.\d{1,3}){3}(\/\d{1,2})?$/, words: 'ip address' },
  { test: /^\+?\d[\d\s().-]{7,}\d$/, words: 'phone number' },
  { test: /^[$€£¥]\s?\d|^\d[\d.,]*\s?(usd|eur|gbp|dollars?|euros?)$/i, words: 'amount' },
  { test: /^\d+(\.\d+)?%$/, words: 'percent' },
  { test: /\.(pdf|docx?|odt|rtf|txt|md|pages)$/i, words: 'file document' },
  { test: /\.(xlsx?|csv|ods|numbers)$/i, words: 'file spreadsheet' },
  { test: /\.(pptx?|key|odp)$/i, words: 'file presentation' },
  { test: /\.(png|jpe?g|gif|webp|heic|svg)$/i, words: 'file image' },
  { test: /\.(mp4|mov|avi|mkv|webm)$/i, words: 'file video' },
  { test: /\.(mp3|wav|m4a|flac|ogg)$/i, words: 'file audio' },
  { test: /\.(zip|tar|gz|tgz)$/i, words: 'file archive' },
  { test: /\.(ts|js|py|go|rb|java|json|ya?ml|toml|sh|c|h|rs)$/i, words: 'file content' },
  { test: /^[a-z0-9-]+(\.[a-z0-9-]+)*\.(com|org|net|io|dev|app|co|ai|example)$/i, words: 'domain' },
  { test: /^#[\p{L}_-][\p{L}\p{N}_-]*$/u, words: 'channel' },
  { test: /^@[\p{L}\p{N}_.-]+$/u, words: 'user' },
  { test: /^[A-Z][A-Z0-9]+-\d+$/, words: 'issue key' },
  { test: /^[\w.-]+\/[\w.-]+$/, words: 'repository' },
];

/** A task split into the words of its request and the values it names, with their kinds' words. */
export interface TaskParts {
  /** Chunks of the request itself, in order. */
  words: string[];
  /**
   * How many of `words` belong to the task's first clause; the rest come after a comma, "so",
   * "because"… and usually give a reason ("delete the branch, it's merged"), not the request.
   */
  firstClause: number;
  /** Chunks that are values: content, names, data. */
  values: string[];
  /** Words a value's kind stands for (`contract.pdf` → file, document), once each. */
  implied: string[];
}

/**
 * Splits a task. `isPhrase` tells whether a hyphenated chunk is a known phrase ("thumbs-up",
 * "to-do") rather than a name ("team-ml").
 */
export function splitTask(text: string, isPhrase: (chunk: string) => boolean): TaskParts {
  const parts: TaskParts = { words: [], firstClause: 0, values: [], implied: [] };
  let clauseEnded = false;
  let rest = unquote(text.slice(0, MAX_TASK_CHARS), parts.values);
  // "file a ticket: checkout page times out": what follows the colon is the ticket.
  const colon = rest.search(/:\s/);
  if (colon > 0 && rest.slice(0, colon).trim().split(/\s+/).length >= 2) {
    parts.values.push(...chunksOf(rest.slice(colon + 1)));
    rest = rest.slice(0, colon);
  }
  const chunks = chunksOf(rest);
  for (let i = 0; i < chunks.length; i += 1) {
    const chunk = chunks[i] as string;
    const bare = chunk.replace(TRAILING_PUNCTUATION, '');
    const lower = bare.toLowerCase();
    // "called" itself says nothing of the operation ("make a label called Receipts" is no call).
    if (NAMING.has(lower) && i + 1 < chunks.length) continue;
    const named = i > 0 && NAMING.has((chunks[i - 1] as string).toLowerCase());
    const hyphenatedName = /\p{L}-\p{L}/u.test(bare) && !isPhrase(bare);
    if (!clauseEnded && parts.words.length > 0 && CLAUSE_WORDS.has(lower)) clauseEnded = true;
    if (named || hyphenatedName || WHEN.has(lower) || VALUE_LIKE.test(bare)) parts.values.push(bare);
    else parts.words.push(chunk);
    if (!clauseEnded) parts.firstClause = parts.words.length;
    if (!clauseEnded && parts.words.length > 0 && /[,;]$|^[-–—]$/.test(chunk)) clauseEnded = true;
  }
  if (!clauseEnded) parts.firstClause = parts.words.length;
  const implied = new Set<string>();
  for (const value of parts.values) {
    const kind = KINDS.find(({ test }) => test.test(value.replace(TRAILING_PUNCTUATION, '')));
    if (kind) for (const word of kind.words.split(' ')) implied.add(word);
  }
  parts.implied = [...implied];
  return parts;
}

function chunksOf(text: string): string[] {
  return text.split(/\s+/).filter((chunk) => chunk !== '');
}

/** Moves quoted spans into `values` and answers the text without them. */
function unquote(text: string, values: string[]): string {
  let out = '';
  let at = 0;
  while (at < text.length) {
    const char = text[at] as string;
    const close = QUOTES[char];
    const atEdge = at === 0 || /[\s(]/.test(text[at - 1] as string);
    if (close !== undefined && atEdge) {
      const end = closingQuote(text, at + 1, close);
      if (end > at + 1) {
        values.push(...chunksOf(text.slice(at + 1, end)));
        out += ' ';
        at = end + 1;
        continue;
      }
    }
    out += char;
    at += 1;
  }
  return out;
}

/** Where `close` ends a quote opened before `from`: followed by the end, a space or punctuation. */
function closingQuote(text: string, from: number, close: string): number {
  for (let at = text.indexOf(close, from); at >= 0; at = text.indexOf(close, at + 1)) {
    const next = text[at + 1];
    if (next === undefined || /[\s.,;:!?)]/.test(next)) return at;
  }
  return -1;
}
