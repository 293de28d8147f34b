/**
 * A registration's document → an OpenAPI 3.x document to derive tools from, or why it is not one.
 *
 * Order: parse (a JSON object, or YAML/JSON text) → Swagger 2.0 converted to OpenAPI 3.0
 * (swagger2openapi, nothing external resolved) → version (3.0.x or 3.1.x). Nothing else refuses a
 * document here: real documents are imperfect, and each operation is judged on its own
 * (`tools.ts`). References are followed where they are used; nothing is ever fetched.
 */
import type { Issue } from '../../shared/errors.ts';
import { err, ok, type Result } from '../result.ts';
import { isObject } from './pointer.ts';
import type { JsonObject, OpenApiVersion } from './types.ts';

export interface LoadedDocument {
  version: OpenApiVersion;
  document: JsonObject;
  /** The registration's document as JSON or YAML text, as it is stored. */
  text: string;
  /** JSON nodes (objects and arrays) of the document, its measure against `$ref` bombs. */
  nodes: number;
}

const VERSION = /^3\.([01])\.\d+(-[0-9A-Za-z.-]+)?$/;

/** Issues point at the document itself; the caller prefixes them (`/openapi`). */
export async function loadDocument(input: unknown): Promise<Result<LoadedDocument, Issue[]>> {
  const fail = (path: string, message: string) => err([{ path, message }]);
  let value = input;
  let text: string;
  if (typeof input === 'string') {
    text = input;
    try {
      // JSON text parses faster and keeps its key order as JSON; anything else is YAML, a superset
      // of JSON, with aliases capped against expansion bombs.
      value = await parseJsonOrYaml(input);
    } catch (error) {
      const reason = error instanceof Error ? error.message.split('\n')[0] : 'unreadable';
      return fail('', `The document is neither JSON nor YAML: ${reason}.`);
    }
  } else {
    text = JSON.stringify(input);
  }
  if (!isObject(value)) return fail('', 'The document must be an OpenAPI document (an object).');
  let document: JsonObject = value;

  if (document.swagger !== undefined && document.openapi === undefined) {
    if (document.swagger !== '2.0')
      return fail('/swagger', 'swagger must be "2.0"; other Swagger versions are not supported.');
    const converted = await convertSwagger(document);
    if (!converted.ok) return converted;
    document = converted.value;
  }
  const versionMatch = typeof document.openapi === 'string' ? VERSION.exec(document.openapi) : null;
  if (!versionMatch) {
    return fail(
      '/openapi',
      'openapi must be an OpenAPI version 3.0.x or 3.1.x, such as "3.1.0" (or swagger "2.0").',
    );
  }
  if (!isObject(document.paths) || Object.keys(document.paths).length === 0) {
    return fail(
      '/paths',
      'The document defines no operation (paths is missing or empty), so it would give no tools.',
    );
  }
  return ok({
    version: versionMatch[1] === '0' ? '3.0' : '3.1',
    document,
    text,
    nodes: countNodes(document),
  });
}

// yaml and swagger2openapi (about 0.7 MB of code) load on first use: start-up parses neither.
async function parseJsonOrYaml(text: string): Promise<unknown> {
  try {
    return JSON.parse(text);
  } catch {
    // The default export: a bundled CommonJS package has no named exports under dynamic import.
    const { default: yaml } = await import('yaml');
    return yaml.parse(text, { maxAliasCount: 100, prettyErrors: false });
  }
}

/** Swagger 2.0 → OpenAPI 3.0 with swagger2openapi: lenient (`patch`), no external reference resolved. */
async function convertSwagger(document: JsonObject): Promise<Result<JsonObject, Issue[]>> {
  try {
    const { default: s2o } = await import('swagger2openapi');
    const result = await s2o.convertObj(structuredClone(document) as never, {
      patch: true,
      warnOnly: true,
      resolve: false,
      resolveInternal: false,
    });
    const converted = (result as { openapi?: unknown }).openapi;
    if (!isObject(converted)) throw new Error('no document came out');
    return ok(converted);
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : 'unknown reason';
    const issues: Issue[] = [
      { path: '', message: `The Swagger 2.0 document could not be converted to OpenAPI 3: ${reason}.` },
    ];
    return err(issues);
  }
}

/** Objects and arrays in a JSON value, counted without recursion (documents can be deep). */
function countNodes(root: unknown): number {
  let count = 0;
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const node = pending.pop();
    if (typeof node !== 'object' || node === null) continue;
    count += 1;
    for (const value of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof value === 'object' && value !== null) pending.push(value);
    }
  }
  return count;
}

/**
 * The base URL the document names: `servers[0].url` with its variables at their defaults, or null
 * when there is none or it is not an absolute http(s) URL.
 */
export function documentServerUrl(document: JsonObject): string | null {
  const server = Array.isArray(document.servers) ? document.servers[0] : undefined;
  if (!isObject(server) || typeof server.url !== 'string') return null;
  const variables = isObject(server.variables) ? server.variables : {};
  const url = server.url.replace(/\{([^{}]+)\}/g, (expression, name: string) => {
    const variable = variables[name];
    return isObject(variable) && typeof variable.default === 'string' ? variable.default : expression;
  });
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? url : null;
  } catch {
    return null;
  }
}
