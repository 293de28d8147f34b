/**
 * A registration's OpenAPI document → a checked, dereferenced document, or the list of its problems.
 *
 * Order: parse (a JSON object, or YAML/JSON text) → version (3.0.x or 3.1.x) → references (only
 * internal `#/...` ones; nothing is ever fetched) → toolgate's own checks (operationIds, parameters,
 * bodies; each problem at its JSON Pointer) → the full OpenAPI schema validation of
 * @readme/openapi-parser (its messages carry no pointer: they are reported at the document) →
 * dereference. Pointers are prefixed (`/openapi` by default) to point into the registration body.
 */
import { validate } from '@readme/openapi-parser';
import { parse as parseYaml } from 'yaml';
import type { Issue } from '../../shared/errors.ts';
import { checkDocument } from './checks.ts';
import { isObject } from './pointer.ts';
import { checkRefs, dereference } from './refs.ts';
import type { JsonObject, OpenApiDocument, OpenApiVersion, Outcome } from './types.ts';

export interface ParsedDocument {
  version: OpenApiVersion;
  /**
   * The document with its internal references replaced by what they point to. A reference that
   * closes a cycle of schemas stays a `$ref` with the same pointer, which resolves in this document.
   */
  document: OpenApiDocument;
}

export interface ParseOptions {
  /** Prepended to every issue's pointer; the document is the `openapi` field of a registration. */
  pointerPrefix?: string;
}

const VERSION = /^3\.([01])\.\d+(-[0-9A-Za-z.-]+)?$/;

export async function parseDocument(
  input: unknown,
  options: ParseOptions = {},
): Promise<Outcome<ParsedDocument>> {
  const prefix = options.pointerPrefix ?? '/openapi';
  const fail = (issues: Issue[]) => ({
    ok: false as const,
    issues: issues.map((issue) => ({ path: prefix + issue.path, message: issue.message })),
  });

  const loaded = load(input);
  if (!loaded.ok) return fail(loaded.issues);
  const document = loaded.document;

  const versionMatch = typeof document.openapi === 'string' ? VERSION.exec(document.openapi) : null;
  if (!versionMatch) {
    const message =
      document.swagger !== undefined
        ? 'Swagger 2.0 documents are not supported; convert the document to OpenAPI 3.'
        : 'openapi must be an OpenAPI version 3.0.x or 3.1.x, such as "3.1.0".';
    return fail([{ path: '/openapi', message }]);
  }
  const version: OpenApiVersion = versionMatch[1] === '0' ? '3.0' : '3.1';

  const refIssues = checkRefs(document);
  if (refIssues.length > 0) return fail(refIssues);
  const issues = checkDocument(document, version);
  if (issues.length > 0) return fail(issues);
  const specIssues = await validateSpecification(document, version);
  if (specIssues.length > 0) return fail(specIssues);

  return { ok: true, version, document: dereference(document as OpenApiDocument, version) };
}

/** The document as a fresh JSON object (the caller's input is never modified). */
function load(input: unknown): { ok: true; document: JsonObject } | { ok: false; issues: Issue[] } {
  let value = input;
  if (typeof input === 'string') {
    try {
      // JSON text (how stored documents are kept) parses faster and keeps its key order as JSON;
      // anything else is YAML, a superset of JSON, with aliases capped against expansion bombs.
      value = parseJsonOrYaml(input);
    } catch (error) {
      const reason = error instanceof Error ? error.message.split('\n')[0] : 'unreadable';
      return {
        ok: false,
        issues: [{ path: '', message: `The document is neither JSON nor YAML: ${reason}.` }],
      };
    }
  }
  if (!isObject(value)) {
    return {
      ok: false,
      issues: [{ path: '', message: 'The document must be an OpenAPI document (an object).' }],
    };
  }
  try {
    return { ok: true, document: structuredClone(value) };
  } catch {
    return { ok: false, issues: [{ path: '', message: 'The document must be plain JSON data.' }] };
  }
}

function parseJsonOrYaml(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return parseYaml(text, { maxAliasCount: 100, prettyErrors: false });
  }
}

/** The full OpenAPI schema and rules of @readme/openapi-parser, with external resolution off. */
async function validateSpecification(document: JsonObject, version: OpenApiVersion): Promise<Issue[]> {
  try {
    const result = await validate(structuredClone(document) as never, {
      resolve: { external: false, file: false },
      validate: { errors: { colorize: false } },
    });
    if (result.valid) return [];
    return result.errors.map((error) => ({
      path: '',
      message: specificationMessage(error.message, version),
    }));
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : 'unknown reason';
    return [{ path: '', message: `The document could not be validated: ${reason}.` }];
  }
}

/**
 * One sentence from the validator's message: its first line, and the document line its code frame
 * marks (the frame shows the dereferenced document, so only the line's text is meaningful).
 */
function specificationMessage(raw: string, version: OpenApiVersion): string {
  const lines = raw.split('\n');
  const head = (lines[0] ?? '').replace(/^[A-Z][A-Z_ ]*[A-Z] (?=\S)/, '').replace(/\.$/, '');
  const marked = lines.find((line) => /^\s*>\s*\d+\s*\|/.test(line));
  const near = marked?.replace(/^\s*>\s*\d+\s*\|\s*/, '').trim();
  return `The document does not follow the OpenAPI ${version} specification: ${head}${near ? ` (at ${near})` : ''}.`;
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
