/**
 * Which operation of the document each registered tool is, without re-deriving tool names: the
 * server lists tools in document order (CONTRACT §5), less the operations it skipped, so the two
 * lists are walked side by side, and each pair is checked against what the server shows (the
 * `title` is the summary; before titles, the description began with it). A document the walk
 * cannot match is an error.
 */

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export interface Operation {
  method: string;
  path: string;
  summary: string | null;
  description: string | null;
}

/** A tool as `GET /tools` lists it; `title` arrives with ranked search (CONTRACT §2). */
export interface ListedTool {
  name: string;
  description: string;
  title?: string;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const text = (value: unknown): string | null =>
  typeof value === 'string' && value.trim() !== '' ? value : null;

/** A path item may be a local `$ref` (`#/components/pathItems/…`). */
function follow(document: Json, value: unknown): unknown {
  let node = value;
  for (let hops = 0; hops < 16 && isObject(node) && typeof node.$ref === 'string'; hops += 1) {
    const ref = node.$ref;
    if (!ref.startsWith('#/')) return node;
    node = ref
      .slice(2)
      .split('/')
      .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
      .reduce<unknown>((at, part) => (isObject(at) ? at[part] : undefined), document);
  }
  return node;
}

/** Every operation of the document in the order the server walks them: paths as written, then METHODS. */
export function documentOperations(document: Json): Operation[] {
  const operations: Operation[] = [];
  if (!isObject(document.paths)) return operations;
  for (const [path, raw] of Object.entries(document.paths)) {
    const item = follow(document, raw);
    if (!isObject(item)) continue;
    for (const method of METHODS) {
      const operation = item[method];
      if (!isObject(operation)) continue;
      operations.push({
        method: method.toUpperCase(),
        path,
        summary: text(operation.summary),
        description: text(operation.description),
      });
    }
  }
  return operations;
}

/** What the server shows as a tool's description for this operation (summary first). */
function shownAs(operation: Operation): string {
  return (
    [operation.summary, operation.description].filter((part) => part !== null).join('\n\n') ||
    `${operation.method} ${operation.path}`
  );
}

/** Whitespace runs as one space: a server may tidy what it shows. */
const tidy = (value: string) => value.replace(/\s+/g, ' ').trim();

/**
 * Whether what the server shows of a tool is this operation's: its title (the summary, else the
 * name) or the beginning of its description. Only the first 60 characters are compared, since a
 * server may shorten long texts.
 */
function describes(tool: ListedTool, operation: Operation): boolean {
  const begins = (shown: string, expected: string) =>
    tidy(shown).startsWith(tidy(expected).slice(0, 60).trim());
  return (
    (tool.title !== undefined && begins(tool.title, operation.summary ?? tool.name)) ||
    begins(tool.description, shownAs(operation))
  );
}

/**
 * Tool name → its operation. Throws when the tools and the served operations don't pair up, so a
 * change of the server's order or of the document shows at once instead of as wrong summaries.
 */
export function matchOperations(
  operations: Operation[],
  skipped: { method: string; path: string }[],
  tools: ListedTool[],
): Map<string, Operation> {
  const left = new Set(skipped.map((entry) => `${entry.method.toUpperCase()} ${entry.path}`));
  const served = operations.filter((operation) => !left.has(`${operation.method} ${operation.path}`));
  if (served.length !== tools.length) {
    throw new Error(`${served.length} operations are served but the server lists ${tools.length} tools`);
  }
  const byName = new Map<string, Operation>();
  for (const [index, tool] of tools.entries()) {
    const operation = served[index] as Operation;
    if (!describes(tool, operation)) {
      throw new Error(
        `tool ${tool.name} (number ${index + 1}) does not describe ${operation.method} ${operation.path}`,
      );
    }
    byName.set(tool.name, operation);
  }
  return byName;
}
