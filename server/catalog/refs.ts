/**
 * Internal `$ref`s of an OpenAPI document: finding them, refusing what can't be resolved here,
 * and dereferencing.
 *
 * Only `#/...` references are allowed: the service never fetches anything a registration names
 * (no remote or file `$ref`s, so no SSRF through a document). Circular schemas keep working:
 * a reference back into a schema that is still being expanded stays a `$ref` (the same pointer,
 * valid in the dereferenced document); tools bundle such schemas under `$defs`.
 */
import type { Issue } from '../../shared/errors.ts';
import { child, getAt, isObject, refToPointer, setOwn } from './pointer.ts';
import type { JsonObject, OpenApiVersion } from './types.ts';

/** Keywords whose values are data, not document structure: a `$ref` inside them is not a reference. */
const LITERAL_KEYS = new Set(['example', 'examples', 'default', 'enum', 'const', 'value']);
/** Schema keywords whose object value maps names to schemas. */
export const SCHEMA_MAPS = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
]);
/** Schema keywords holding one schema, or (for `items` in old drafts) a list of schemas. */
export const SCHEMA_SINGLE = new Set([
  'items',
  'additionalItems',
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contentSchema',
]);
export const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
/** Siblings of a schema `$ref` that only annotate, so they can be merged over the target. */
const ANNOTATIONS = new Set([
  'description',
  'summary',
  'title',
  'deprecated',
  'readOnly',
  'writeOnly',
  'examples',
  'example',
  'default',
  '$comment',
]);

/** How a node is read: OpenAPI structure, a schema, or a map of names to schemas (`properties`, ...). */
type Context = 'document' | 'schema' | 'schemaMap';

/** A node's children that can hold references, each with its pointer and the context it is read in. */
function* children(
  node: unknown,
  pointer: string,
  context: Context,
): Generator<{ key: string | number; value: unknown; pointer: string; context: Context }> {
  if (Array.isArray(node)) {
    for (const [index, value] of node.entries()) {
      yield { key: index, value, pointer: child(pointer, index), context };
    }
    return;
  }
  if (!isObject(node)) return;
  for (const [key, value] of Object.entries(node)) {
    const at = child(pointer, key);
    if (context === 'schemaMap') {
      // Every entry is a schema, whatever its name (a property may be called "x-id" or "default").
      yield { key, value, pointer: at, context: 'schema' };
      continue;
    }
    if (key === '$ref' || key.startsWith('x-')) continue;
    if (context === 'schema') {
      if (SCHEMA_MAPS.has(key)) yield { key, value, pointer: at, context: 'schemaMap' };
      else if (SCHEMA_SINGLE.has(key) || SCHEMA_LISTS.has(key)) yield { key, value, pointer: at, context };
      // Other schema keywords hold data (enum, const, examples, ...) or plain values.
    } else if (key === 'schema') {
      yield { key, value, pointer: at, context: 'schema' };
    } else if (key === 'schemas' && pointer === '/components') {
      yield { key, value, pointer: at, context: 'schemaMap' };
    } else if (!LITERAL_KEYS.has(key)) {
      yield { key, value, pointer: at, context };
    }
  }
}

/** Whether `node` is a Reference Object (in a map of names, a "$ref" entry is just a name). */
function isRef(node: unknown, context: Context): node is JsonObject & { $ref: string } {
  return context !== 'schemaMap' && isObject(node) && typeof node.$ref === 'string';
}

export interface RefSite {
  /** Pointer of the object holding `$ref`. */
  pointer: string;
  ref: string;
}

/** Every `$ref` of the document that is a reference (not data that happens to hold one). */
export function findRefs(document: unknown): RefSite[] {
  const sites: RefSite[] = [];
  const visit = (node: unknown, pointer: string, context: Context): void => {
    if (isRef(node, context)) sites.push({ pointer, ref: node.$ref });
    for (const next of children(node, pointer, context)) visit(next.value, next.pointer, next.context);
  };
  visit(document, '', 'document');
  return sites;
}

/** Every schema of the document that is not inside another schema, with its pointer. */
export function findSchemas(document: unknown): { pointer: string; schema: unknown }[] {
  const found: { pointer: string; schema: unknown }[] = [];
  const visit = (node: unknown, pointer: string, context: Context): void => {
    for (const next of children(node, pointer, context)) {
      if (next.context === 'schema' && context !== 'schema')
        found.push({ pointer: next.pointer, schema: next.value });
      else visit(next.value, next.pointer, next.context);
    }
  };
  visit(document, '', 'document');
  return found;
}

/**
 * Problems with the document's references, pointers relative to the document: external or
 * malformed references, references to nothing, and chains of references that never reach a value.
 */
export function checkRefs(document: unknown): Issue[] {
  const issues: Issue[] = [];
  for (const site of findRefs(document)) {
    const path = child(site.pointer, '$ref');
    const pointer = refToPointer(site.ref);
    if (pointer === null) {
      issues.push({
        path,
        message: site.ref.startsWith('#')
          ? `Reference "${site.ref}" is not a JSON Pointer into this document (#/...).`
          : `External reference "${site.ref}" is not allowed; only references inside the document (#/...) are.`,
      });
      continue;
    }
    const seen = [pointer];
    let target = getAt(document, pointer);
    while (isObject(target) && typeof target.$ref === 'string') {
      const next = refToPointer(target.$ref);
      // A broken link further down the chain is reported at its own site.
      if (next === null) break;
      if (seen.includes(next)) {
        issues.push({
          path,
          message: `Reference "${site.ref}" starts a cycle of references that never reaches a definition.`,
        });
        break;
      }
      seen.push(next);
      target = getAt(document, next);
    }
    if (getAt(document, pointer) === undefined) {
      issues.push({ path, message: `Reference "${site.ref}" points to nothing in the document.` });
    }
  }
  return issues;
}

/**
 * A copy of the document with every reference replaced by what it points to, except a schema
 * reference back into a schema being expanded (a circular schema), which stays `$ref`.
 * Call only on a document whose references passed `checkRefs`.
 */
export function dereference<T>(document: T, version: OpenApiVersion): T {
  const targets = new Set<string>();
  for (const site of findRefs(document)) {
    const pointer = refToPointer(site.ref);
    if (pointer !== null) targets.add(pointer);
  }
  const memo = new Map<string, unknown>();
  const active = new Set<string>();

  const resolve = (node: JsonObject & { $ref: string }, pointer: string, context: Context): unknown => {
    const target = refToPointer(node.$ref) ?? '';
    const { $ref, ...siblings } = node;
    if (active.has(target)) {
      return version === '3.1' ? { $ref, ...walkChildren(siblings, pointer, context) } : { $ref };
    }
    const value = walk(getAt(document, target), target, context);
    const names = Object.keys(siblings);
    if (version === '3.0' || !isObject(value) || names.length === 0) return value;
    // 3.1: a Reference Object's summary/description override the target's; a schema's siblings apply.
    if (context === 'document') {
      const overrides = names.filter((name) => name === 'summary' || name === 'description');
      return { ...value, ...Object.fromEntries(overrides.map((name) => [name, siblings[name]])) };
    }
    if (names.every((name) => ANNOTATIONS.has(name))) return { ...value, ...siblings };
    return { allOf: [value], ...walkChildren(siblings, pointer, context) };
  };

  const walkChildren = <N extends object>(node: N, pointer: string, context: Context): N => {
    const out = (Array.isArray(node) ? [...node] : { ...node }) as Record<string | number, unknown>;
    for (const next of children(node, pointer, context)) {
      setOwn(out, next.key, walk(next.value, next.pointer, next.context));
    }
    return out as N;
  };

  const walk = (node: unknown, pointer: string, context: Context): unknown => {
    if (memo.has(pointer)) return memo.get(pointer);
    if (isRef(node, context)) return resolve(node, pointer, context);
    if (!Array.isArray(node) && !isObject(node)) return node;
    if (!targets.has(pointer)) return walkChildren(node, pointer, context);
    active.add(pointer);
    const out = walkChildren(node, pointer, context);
    active.delete(pointer);
    memo.set(pointer, out);
    return out;
  };

  return walk(document, '', 'document') as T;
}
