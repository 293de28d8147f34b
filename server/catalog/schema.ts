/**
 * OpenAPI schemas → JSON Schema 2020-12, the one dialect every tool's `parametersSchema` is written
 * in (3.1 schemas already are; 3.0 ones are converted).
 *
 * References are never inlined: every internal `$ref` becomes `#/$defs/<name>`, and a tool's schema
 * carries under `$defs` only the definitions it reaches. So a schema used in a hundred places is
 * converted once, a tool stays small, and a `$ref` "bomb" costs nothing to convert (its expansion
 * is measured instead, see `expansion.ts`).
 *
 * 3.0 conversion: `nullable` → a `"null"` type, boolean `exclusiveMinimum`/`exclusiveMaximum` →
 * numeric ones, `example` → `examples`. Request schemas lose their `readOnly` properties (they are
 * answered, never sent). Keywords that mean nothing to a validator of a request (`xml`,
 * `externalDocs`, `discriminator`) are dropped, as are nested `$id`/`$schema`, which would change how
 * `$defs` references resolve. Obvious mistakes of real documents (`required: true`, `type: "int"`,
 * `pattern: 0`) are dropped rather than failing the operation.
 */
import { child, getAt, isObject, refToPointer, setOwn, unescapeToken } from './pointer.ts';
import type { JsonObject, JsonSchema, OpenApiVersion } from './types.ts';

/** Schema keywords whose object value maps names to schemas. */
export const SCHEMA_MAPS = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
]);
/** Schema keywords holding one schema. */
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

const DROPPED = new Set([
  'xml',
  'externalDocs',
  'discriminator',
  '$id',
  '$schema',
  'nullable',
  'example',
  '$anchor',
  '$dynamicAnchor',
  '$dynamicRef',
]);
const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);
/** Keywords whose value must have this type; a document's mistake (`pattern: 0`) drops the keyword. */
const KEYWORD_TYPES: Record<string, 'string' | 'number' | 'boolean'> = {
  pattern: 'string',
  format: 'string',
  title: 'string',
  description: 'string',
  minLength: 'number',
  maxLength: 'number',
  minItems: 'number',
  maxItems: 'number',
  minProperties: 'number',
  maxProperties: 'number',
  minimum: 'number',
  maximum: 'number',
  multipleOf: 'number',
  uniqueItems: 'boolean',
  readOnly: 'boolean',
  writeOnly: 'boolean',
  deprecated: 'boolean',
};
/** Siblings of a 3.0 `$ref` kept although the specification says to ignore them: they only annotate. */
const ANNOTATIONS = new Set(['description', 'title', 'deprecated', 'examples', 'default', '$comment']);

/** An operation that cannot be served; the message says why (it becomes a `skipped` reason). */
export class Unservable extends Error {
  override readonly name = 'Unservable';
}

/** One converted definition: its schema, the definitions it references directly (with counts), its own size. */
interface Definition {
  name: string;
  schema: JsonSchema;
  refs: Map<string, number>;
  nodes: number;
  /** Characters of its JSON, measured when first needed. */
  size?: number;
}

/** The result of converting a tool's own schemas: what they reference and how many nodes they hold. */
export interface Converted {
  schema: JsonSchema;
  refs: Map<string, number>;
  nodes: number;
}

/**
 * A converter for one document: definitions are converted once and shared by every tool.
 * `convert` throws `Unservable` for a reference that leaves the document or points to nothing.
 */
export class SchemaConverter {
  readonly #definitions = new Map<string, Definition | Unservable>();
  readonly #names = new Set<string>();
  #components: Map<string, number> | undefined;
  readonly #expansions = new Map<string, number>();

  constructor(
    private readonly document: unknown,
    private readonly version: OpenApiVersion,
  ) {}

  /** A schema of an operation, `{}` when missing; its references are recorded in the result. */
  convert(schema: unknown): Converted {
    const refs = new Map<string, number>();
    const counter = { nodes: 0 };
    return { schema: this.#convert(schema, refs, counter), refs, nodes: counter.nodes };
  }

  /**
   * The definitions reachable from `refs`, by name, for a tool's `$defs`, within `budget`
   * characters of JSON: whole levels of references (nearest first) are kept while they fit, and
   * `cut` names the definitions left out — references to them become open schemas (see `prune`).
   * Keeps a tool of Microsoft Graph or DocuSign (whose entities reference hundreds of others) at a
   * size a caller can read, at the price of not checking what lies deeper.
   */
  defsFor(
    refs: Iterable<string>,
    budget = Number.POSITIVE_INFINITY,
  ): { defs: Record<string, JsonSchema>; cut: Set<string> } {
    const defs: Record<string, JsonSchema> = {};
    const cut = new Set<string>();
    let level = [...new Set(refs)];
    const seen = new Set(level);
    let size = 0;
    while (level.length > 0) {
      const definitions = level
        .map((pointer) => this.#definitions.get(pointer))
        .filter(
          (definition): definition is Definition =>
            definition !== undefined && !(definition instanceof Unservable),
        );
      const levelSize = definitions.reduce((total, definition) => total + this.#sizeOf(definition), 0);
      if (size + levelSize > budget) {
        for (const definition of definitions) cut.add(definition.name);
        for (const pointer of this.#reachableFrom(level, seen)) {
          const definition = this.#definitions.get(pointer);
          if (definition && !(definition instanceof Unservable)) cut.add(definition.name);
        }
        break;
      }
      size += levelSize;
      const next: string[] = [];
      for (const definition of definitions) {
        setOwn(defs, definition.name, definition.schema);
        for (const pointer of definition.refs.keys()) {
          if (!seen.has(pointer)) {
            seen.add(pointer);
            next.push(pointer);
          }
        }
      }
      level = next;
    }
    if (cut.size === 0) return { defs: sortedByName(defs), cut };
    const kept: Record<string, JsonSchema> = {};
    for (const [name, schema] of Object.entries(defs)) setOwn(kept, name, prune(schema, cut));
    return { defs: sortedByName(kept), cut };
  }

  /** Definitions reachable from `start` that are not in `seen` yet (adds them to it). */
  #reachableFrom(start: string[], seen: Set<string>): string[] {
    const found: string[] = [];
    const pending = [...start];
    while (pending.length > 0) {
      const definition = this.#definitions.get(pending.pop() as string);
      if (!definition || definition instanceof Unservable) continue;
      for (const pointer of definition.refs.keys()) {
        if (seen.has(pointer)) continue;
        seen.add(pointer);
        found.push(pointer);
        pending.push(pointer);
      }
    }
    return found;
  }

  #sizeOf(definition: Definition): number {
    definition.size ??= JSON.stringify(definition.schema).length + definition.name.length + 4;
    return definition.size;
  }

  /**
   * The nodes a full inline expansion of `converted` would have, recursive schemas left as
   * references: a reference inside a cycle of definitions counts as one node (no tool can inline
   * it), every other one as the whole expansion of its target. Exact, linear in the definitions,
   * and capped, so a `$ref` bomb is measured without ever being expanded.
   */
  expandedSize(converted: Converted, cap: number): number {
    this.#components ??= this.#stronglyConnected();
    const components = this.#components;
    const memo = this.#expansions;
    const size = (pointer: string): number => {
      const known = memo.get(pointer);
      if (known !== undefined) return known;
      const definition = this.#definitions.get(pointer);
      if (!definition || definition instanceof Unservable) return 1;
      const own = components.get(pointer);
      let total = definition.nodes;
      for (const [next, count] of definition.refs) {
        const cyclic = own !== undefined && components.get(next) === own;
        total = Math.min(cap, total + count * (cyclic ? 1 : size(next)));
      }
      memo.set(pointer, total);
      return total;
    };
    let total = converted.nodes;
    for (const [pointer, count] of converted.refs) total = Math.min(cap, total + count * size(pointer));
    return total;
  }

  /** Tarjan's strongly connected components of the definitions' reference graph: pointer → component id. */
  #stronglyConnected(): Map<string, number> {
    const component = new Map<string, number>();
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    let counter = 0;
    let components = 0;
    const edges = (pointer: string): string[] => {
      const definition = this.#definitions.get(pointer);
      return definition && !(definition instanceof Unservable) ? [...definition.refs.keys()] : [];
    };
    for (const root of this.#definitions.keys()) {
      if (index.has(root)) continue;
      // Iterative, so a deep chain of definitions can't overflow the stack.
      const work: { node: string; next: number; targets: string[] }[] = [];
      const enter = (node: string) => {
        index.set(node, counter);
        low.set(node, counter);
        counter += 1;
        stack.push(node);
        onStack.add(node);
        work.push({ node, next: 0, targets: edges(node) });
      };
      enter(root);
      while (work.length > 0) {
        const frame = work[work.length - 1] as (typeof work)[number];
        if (frame.next < frame.targets.length) {
          const target = frame.targets[frame.next++] as string;
          if (!index.has(target)) enter(target);
          else if (onStack.has(target))
            low.set(frame.node, Math.min(low.get(frame.node) as number, index.get(target) as number));
          continue;
        }
        work.pop();
        const parent = work[work.length - 1];
        if (parent)
          low.set(parent.node, Math.min(low.get(parent.node) as number, low.get(frame.node) as number));
        if (low.get(frame.node) === index.get(frame.node)) {
          let member: string | undefined;
          do {
            member = stack.pop() as string;
            onStack.delete(member);
            component.set(member, components);
          } while (member !== frame.node);
          components += 1;
        }
      }
    }
    return component;
  }

  /** The definition at `pointer`, converted on first use; its name under `$defs`. */
  #define(pointer: string, ref: string): string {
    const known = this.#definitions.get(pointer);
    if (known instanceof Unservable) throw known;
    if (known) return known.name;
    const target = getAt(this.document, pointer);
    if (target === undefined) {
      const problem = new Unservable(`reference "${ref}" points to nothing in the document`);
      this.#definitions.set(pointer, problem);
      throw problem;
    }
    const definition: Definition = { name: this.#nameFor(pointer), schema: true, refs: new Map(), nodes: 0 };
    // Registered before converting, so a schema that references itself finds its name.
    this.#definitions.set(pointer, definition);
    try {
      const counter = { nodes: 0 };
      definition.schema = this.#convert(target, definition.refs, counter);
      definition.nodes = counter.nodes;
    } catch (error) {
      const problem = error instanceof Unservable ? error : new Unservable(String(error));
      this.#definitions.set(pointer, problem);
      throw problem;
    }
    return definition.name;
  }

  #nameFor(pointer: string): string {
    const tokens = pointer.split('/').slice(1).map(unescapeToken);
    const base =
      (pointer.startsWith('/components/schemas/') && tokens.length === 3
        ? (tokens[2] ?? '')
        : tokens.join('_')
      )
        .replace(/[^A-Za-z0-9_.-]/g, '_')
        .slice(0, 200) || 'schema';
    let name = base;
    for (let n = 2; this.#names.has(name); n += 1) name = `${base}_${n}`;
    this.#names.add(name);
    return name;
  }

  #reference(ref: string, refs: Map<string, number>): string {
    const pointer = refToPointer(ref);
    if (pointer === null) {
      throw new Unservable(
        ref.startsWith('#')
          ? `reference "${ref}" is not a JSON Pointer into the document`
          : `external reference "${ref}" (only references inside the document are followed)`,
      );
    }
    const name = this.#define(pointer, ref);
    refs.set(pointer, (refs.get(pointer) ?? 0) + 1);
    return `#/$defs/${escapeDefName(name)}`;
  }

  #convert(schema: unknown, refs: Map<string, number>, counter: { nodes: number }): JsonSchema {
    if (typeof schema === 'boolean') return schema;
    if (!isObject(schema)) return {};
    counter.nodes += 1;
    const out: JsonObject = {};
    if (typeof schema.$ref === 'string') {
      out.$ref = this.#reference(schema.$ref, refs);
      // 3.0 ignores a reference's siblings; annotations are kept for the reader. 3.1 applies them all.
      if (this.version === '3.0') {
        for (const key of ANNOTATIONS) if (schema[key] !== undefined) setOwn(out, key, schema[key]);
        return out;
      }
    }
    for (const [key, value] of Object.entries(schema)) {
      if (key === '$ref' || DROPPED.has(key)) continue;
      const expected = KEYWORD_TYPES[key];
      if (expected !== undefined && typeof value !== expected) continue;
      if (key === 'properties' && isObject(value)) {
        const properties: JsonObject = {};
        for (const [name, sub] of Object.entries(value)) {
          if (this.#readOnly(sub)) continue;
          setOwn(properties, name, this.#convert(sub, refs, counter));
        }
        out.properties = properties;
      } else if (SCHEMA_MAPS.has(key) && isObject(value)) {
        const map: JsonObject = {};
        for (const [name, sub] of Object.entries(value)) setOwn(map, name, this.#convert(sub, refs, counter));
        setOwn(out, key === 'definitions' ? '$defs' : key, map);
      } else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) {
        setOwn(
          out,
          key,
          value.map((sub) => this.#convert(sub, refs, counter)),
        );
      } else if (SCHEMA_SINGLE.has(key) && (isObject(value) || typeof value === 'boolean')) {
        setOwn(out, key, this.#convert(value, refs, counter));
      } else if (key === 'items' && Array.isArray(value)) {
        out.prefixItems = value.map((sub) => this.#convert(sub, refs, counter)); // draft-04 tuples
      } else if (key === 'required') {
        if (Array.isArray(value) && value.every((name) => typeof name === 'string')) out.required = value;
      } else if (key === 'type') {
        const type = cleanType(value);
        if (type !== undefined) out.type = type;
      } else {
        setOwn(out, key, value);
      }
    }
    if (schema.example !== undefined && out.examples === undefined) out.examples = [schema.example];
    if (Array.isArray(out.required) && isObject(out.properties) && isObject(schema.properties)) {
      // Read-only properties were removed: they are not required of a request either.
      const removed = Object.keys(schema.properties).filter(
        (name) => !Object.hasOwn(out.properties as JsonObject, name),
      );
      if (removed.length > 0) {
        const required = (out.required as string[]).filter((name) => !removed.includes(name));
        if (required.length > 0) out.required = required;
        else delete out.required;
      }
    }
    // Boolean exclusive bounds (draft 4, which many 3.1 documents still write) are converted too.
    return this.version === '3.0' ? fix30(schema, out) : fixExclusiveBounds(out);
  }

  /** Whether a property schema (or the definition it references) is read-only. */
  #readOnly(schema: unknown): boolean {
    let node = schema;
    for (let hops = 0; hops < 16 && isObject(node); hops += 1) {
      if (node.readOnly === true) return true;
      if (typeof node.$ref !== 'string') return false;
      const pointer = refToPointer(node.$ref);
      if (pointer === null) return false;
      node = getAt(this.document, pointer);
    }
    return false;
  }
}

/**
 * `schema` with each reference to a cut definition replaced by an open schema that names it
 * (copies only what changes: definitions are shared by every tool).
 */
export function prune(schema: JsonSchema, cut: Set<string>): JsonSchema {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) {
      const items = node.map(walk);
      return items.some((item, index) => item !== node[index]) ? items : node;
    }
    if (!isObject(node)) return node;
    if (typeof node.$ref === 'string' && node.$ref.startsWith('#/$defs/') && cut.has(node.$ref.slice(8))) {
      const { $ref, ...rest } = node;
      return {
        ...rest,
        $comment: `${node.$ref.slice(8)}: not expanded here (the tool's schema would be too large)`,
      };
    }
    let changed = false;
    const out: JsonObject = {};
    for (const [key, value] of Object.entries(node)) {
      const next = walk(value);
      if (next !== value) changed = true;
      setOwn(out, key, next);
    }
    return changed ? out : node;
  };
  return walk(schema) as JsonSchema;
}

/** A `$defs` name as a JSON Pointer token (names are `[A-Za-z0-9_.-]`, so nothing to escape). */
function escapeDefName(name: string): string {
  return child('', name).slice(1);
}

function sortedByName(defs: Record<string, JsonSchema>): Record<string, JsonSchema> {
  const sorted: Record<string, JsonSchema> = {};
  for (const name of Object.keys(defs).sort()) setOwn(sorted, name, defs[name]);
  return sorted;
}

/** A `type` JSON Schema accepts, or undefined when the document wrote something else. */
function cleanType(value: unknown): unknown {
  if (typeof value === 'string') return JSON_TYPES.has(value) ? value : undefined;
  if (Array.isArray(value)) {
    const types = value.filter((type) => typeof type === 'string' && JSON_TYPES.has(type));
    return types.length > 0 ? [...new Set(types)] : undefined;
  }
  return undefined;
}

/** The 3.0 keyword rewrites that need the original schema beside its converted copy. */
function fixExclusiveBounds(out: JsonObject): JsonObject {
  for (const [exclusive, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (typeof out[exclusive] !== 'boolean') continue;
    if (out[exclusive] === true && typeof out[bound] === 'number') {
      out[exclusive] = out[bound];
      delete out[bound];
    } else {
      delete out[exclusive];
    }
  }
  return out;
}

function fix30(original: JsonObject, out: JsonObject): JsonSchema {
  fixExclusiveBounds(out);
  if (original.nullable !== true) return out;
  if (typeof out.type === 'string') {
    out.type = [out.type, 'null'];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    return out;
  }
  // `nullable` beside a composition (`allOf: [{ $ref }]` is the usual way to make a reference nullable).
  if (out.type === undefined && (out.allOf || out.anyOf || out.oneOf || out.$ref)) {
    return { anyOf: [out, { type: 'null' }] };
  }
  return out;
}
