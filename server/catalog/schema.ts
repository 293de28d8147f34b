/**
 * OpenAPI schemas → self-contained JSON Schema 2020-12, the one dialect every tool's
 * `parametersSchema` is written in (3.1 schemas already are; 3.0 ones are converted).
 *
 * 3.0 conversion: `nullable` → a `"null"` type, boolean `exclusiveMinimum`/`exclusiveMaximum`
 * → numeric ones, `example` → `examples`, and read-only properties are not required (OpenAPI 3.0
 * says `required` on them applies to responses only; tool schemas describe requests). Keywords
 * that mean nothing to a validator of a request (`xml`, `externalDocs`, `discriminator`) are dropped,
 * as are nested `$id`/`$schema`, which would change how the bundled `$ref`s resolve.
 *
 * A circular schema reaches here as a `$ref` into the dereferenced document; it is copied under
 * `$defs` and the reference rewritten to `#/$defs/<name>`.
 */
import { escapeToken, getAt, isObject, refToPointer, setOwn, unescapeToken } from './pointer.ts';
import { SCHEMA_LISTS, SCHEMA_MAPS, SCHEMA_SINGLE } from './refs.ts';
import type { JsonObject, JsonSchema, OpenApiVersion } from './types.ts';

const DROPPED = new Set(['xml', 'externalDocs', 'discriminator', '$id', '$schema', 'nullable', 'example']);

export interface SchemaConverter {
  /** The schema as JSON Schema 2020-12; `{}` for a missing schema. */
  convert(schema: unknown): JsonSchema;
  /** Schemas referenced by what was converted so far, for the root's `$defs`. */
  defs(): Record<string, JsonSchema>;
}

/**
 * A converter for the schemas of one tool (they share one `$defs`). With `keepRefs`, `$ref`s are
 * copied as they are (to check a schema of the registered document on its own).
 */
export function createSchemaConverter(
  document: unknown,
  version: OpenApiVersion,
  options: { keepRefs?: boolean } = {},
): SchemaConverter {
  const defs: Record<string, JsonSchema> = {};
  const names = new Map<string, string>();

  const defName = (pointer: string): string => {
    const known = names.get(pointer);
    if (known !== undefined) return known;
    const tokens = pointer.split('/').slice(1).map(unescapeToken);
    const base = (
      pointer.startsWith('/components/schemas/') && tokens.length === 3 ? (tokens[2] ?? '') : tokens.join('_')
    ).replace(/[^A-Za-z0-9_.-]/g, '_');
    let name = base || 'schema';
    for (let n = 2; Object.hasOwn(defs, name); n += 1) name = `${base}_${n}`;
    names.set(pointer, name);
    setOwn(defs, name, true); // reserved while converting, so a self-reference finds the name
    setOwn(defs, name, convert(getAt(document, pointer)));
    return name;
  };

  const convert = (schema: unknown): JsonSchema => {
    if (typeof schema === 'boolean') return schema;
    if (!isObject(schema)) return {};
    const out: JsonObject = {};
    for (const [key, value] of Object.entries(schema)) {
      if (key === '$ref' && typeof value === 'string' && !options.keepRefs) {
        const pointer = refToPointer(value);
        out.$ref = pointer === null ? value : `#/$defs/${escapeToken(defName(pointer))}`;
      } else if (DROPPED.has(key)) {
        // handled below or meaningless for request validation
      } else if (SCHEMA_MAPS.has(key) && isObject(value)) {
        setOwn(
          out,
          key === 'definitions' ? '$defs' : key,
          Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, convert(sub)])),
        );
      } else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) {
        setOwn(out, key, value.map(convert));
      } else if (SCHEMA_SINGLE.has(key) && (isObject(value) || typeof value === 'boolean')) {
        setOwn(out, key, convert(value));
      } else if (key === 'items' && Array.isArray(value)) {
        out.prefixItems = value.map(convert); // draft-04 tuples, seen in loose 3.0 documents
      } else {
        setOwn(out, key, value);
      }
    }
    if (schema.example !== undefined && out.examples === undefined) out.examples = [schema.example];
    return version === '3.0' ? fix30(schema, out) : out;
  };

  return { convert, defs: () => ({ ...defs }) };
}

/** The 3.0 keyword rewrites that need the original schema beside its converted copy. */
function fix30(original: JsonObject, out: JsonObject): JsonSchema {
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
  if (Array.isArray(out.required) && isObject(out.properties)) {
    const properties = out.properties;
    const required = out.required.filter(
      (name) =>
        !(typeof name === 'string' && isObject(properties[name]) && properties[name].readOnly === true),
    );
    if (required.length > 0) out.required = required;
    else delete out.required;
  }
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
