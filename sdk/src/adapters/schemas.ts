/**
 * A tool's parameter schema (JSON Schema 2020-12, as `GET /tools` serves it) → what each model
 * provider accepts. The server validates every call against the original schema, so a keyword a
 * provider cannot take is dropped here (the model may then send a value the server refuses with
 * `invalid_parameters`, which the model reads and corrects), never enforced twice.
 */

type Json = Record<string, unknown>;

/** Keywords whose value is a map of schemas, a list of schemas, or one schema. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const SCHEMA_SINGLE = new Set([
  'items',
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedProperties',
  'unevaluatedItems',
  'additionalItems',
]);

/** Annotations no provider needs, some reject (`$schema`, `examples`, OpenAPI's `x-…`). */
const ANNOTATIONS = new Set([
  '$schema',
  '$id',
  '$comment',
  'examples',
  'example',
  'deprecated',
  'readOnly',
  'writeOnly',
  'contentMediaType',
  'contentEncoding',
  'contentSchema',
]);

/**
 * JSON Schema's own formats; OpenAPI's (`int32`, `int64`, `float`, `double`, `byte`, `binary`,
 * `password`) are dropped: providers reject or ignore them.
 */
const PORTABLE_FORMATS = new Set([
  'date-time',
  'date',
  'time',
  'duration',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'uuid',
  'uri',
]);

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Rebuilds every sub-schema with `node`, leaving data keywords (`enum`, `required`, …) as they are. */
function mapSubschemas(schema: Json, node: (sub: unknown) => unknown): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (SCHEMA_MAPS.has(key) && isObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, node(sub)]));
    } else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) {
      out[key] = value.map(node);
    } else if (SCHEMA_SINGLE.has(key) && (isObject(value) || typeof value === 'boolean')) {
      out[key] = node(value);
    } else {
      out[key] = value;
    }
  }
  return out;
}

/**
 * The schema without what providers reject or ignore: `$schema`, `$id`, `examples`, `example`,
 * `deprecated`, `readOnly`/`writeOnly`, `content*`, OpenAPI extensions (`x-…`) and OpenAPI's
 * formats (`int64`, `float`, `binary`, …). Everything that constrains a value is kept. For the
 * AI SDK, LangChain, OpenAI without strict mode and Anthropic without strict mode.
 *
 * @example portableSchema({ $schema: '…', type: 'integer', format: 'int64' }) // { type: 'integer' }
 */
export function portableSchema(schema: unknown): Json {
  const clean = (node: unknown): unknown => {
    if (!isObject(node)) return node;
    const kept: Json = {};
    for (const [key, value] of Object.entries(node)) {
      if (ANNOTATIONS.has(key) || key.startsWith('x-')) continue;
      if (key === 'format' && !(typeof value === 'string' && PORTABLE_FORMATS.has(value))) continue;
      kept[key] = value;
    }
    return mapSubschemas(kept, clean);
  };
  const root = clean(schema);
  return isObject(root) ? root : { type: 'object', properties: {} };
}

/** What a provider's strict mode takes (OpenAI Structured Outputs, Anthropic strict tool use). */
export interface StrictProfile {
  /** OpenAI: every property required, optional ones made nullable. Anthropic: optional stays optional. */
  requireAll: boolean;
  /** Keywords kept on a schema node; any other is dropped (constraints the server checks anyway). */
  keywords: ReadonlySet<string>;
  formats: ReadonlySet<string>;
  /** Whether `$ref` into `$defs` (and so recursion) is supported. */
  refs: boolean;
  /** Most nesting levels of objects, most properties in all (`Infinity`: no limit). */
  maxDepth: number;
  maxProperties: number;
}

/**
 * OpenAI Structured Outputs for function calling (`strict: true`): objects closed
 * (`additionalProperties: false`), every property required (optional ones accept `null`), only
 * the supported keywords and formats, at most 10 levels and 5 000 properties.
 */
export const OPENAI_STRICT: StrictProfile = {
  requireAll: true,
  keywords: new Set([
    'type',
    'properties',
    'required',
    'additionalProperties',
    'items',
    'enum',
    'const',
    'anyOf',
    '$ref',
    '$defs',
    'description',
    'pattern',
    'format',
    'multipleOf',
    'minimum',
    'maximum',
    'exclusiveMinimum',
    'exclusiveMaximum',
    'minItems',
    'maxItems',
  ]),
  formats: new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']),
  refs: true,
  maxDepth: 10,
  maxProperties: 5000,
};

/**
 * Anthropic strict tool use (`strict: true`): objects closed, optional properties allowed, no
 * numeric or length constraints, no recursive schemas.
 */
export const ANTHROPIC_STRICT: StrictProfile = {
  requireAll: false,
  keywords: new Set([
    'type',
    'properties',
    'required',
    'additionalProperties',
    'items',
    'enum',
    'const',
    'anyOf',
    'description',
    'pattern',
    'format',
    'default',
  ]),
  formats: PORTABLE_FORMATS,
  refs: false,
  maxDepth: Number.POSITIVE_INFINITY,
  maxProperties: Number.POSITIVE_INFINITY,
};

/** Keywords no strict mode can express: a schema that needs one stays non-strict. */
const INEXPRESSIBLE = new Set([
  'patternProperties',
  'not',
  'if',
  'then',
  'else',
  'dependentSchemas',
  'dependentRequired',
  'prefixItems',
  'contains',
  'unevaluatedProperties',
  'unevaluatedItems',
  'propertyNames',
  'additionalItems',
  'allOf',
]);

export type StrictConversion = { ok: true; schema: Json } | { ok: false; reason: string };

class Inexpressible extends Error {}

/**
 * The schema in a provider's strict mode, or why it cannot be (a free-form object, a map with
 * `additionalProperties: {…}`, `allOf`, `not`, a recursive schema where refs are unsupported, a
 * limit exceeded): the caller then sends that tool non-strict.
 *
 * @example
 * strictSchema({ type: 'object', properties: { a: { type: 'string' } } }, OPENAI_STRICT)
 * // { ok: true, schema: { type: 'object', properties: { a: { type: ['string', 'null'] } }, required: ['a'], additionalProperties: false } }
 */
export function strictSchema(schema: unknown, profile: StrictProfile): StrictConversion {
  let properties = 0;
  const fail = (reason: string): never => {
    throw new Inexpressible(reason);
  };

  const convert = (node: unknown, depth: number, path: string): Json => {
    if (!isObject(node)) return fail(`${path || '/'} is a boolean schema`);
    if (depth > profile.maxDepth) fail(`nesting deeper than ${profile.maxDepth} levels at ${path}`);
    for (const key of Object.keys(node)) {
      if (INEXPRESSIBLE.has(key)) fail(`"${key}" at ${path || '/'}`);
    }
    const source: Json = { ...node };
    // oneOf → anyOf: looser (several branches may match); the server still checks oneOf.
    if (Array.isArray(source.oneOf)) {
      source.anyOf = [...(Array.isArray(source.anyOf) ? source.anyOf : []), ...source.oneOf];
      delete source.oneOf;
    }
    const out: Json = {};
    for (const [key, value] of Object.entries(source)) {
      if (!profile.keywords.has(key)) continue;
      if (key === 'format' && !(typeof value === 'string' && profile.formats.has(value))) continue;
      out[key] = value;
    }
    if (!('type' in out || 'anyOf' in out || '$ref' in out || 'enum' in out || 'const' in out)) {
      fail(`${path || '/'} accepts any value`);
    }
    if (Array.isArray(out.anyOf)) {
      out.anyOf = out.anyOf.map((branch, i) => convert(branch, depth, `${path}/anyOf/${i}`));
    }
    if (isObject(out.$defs)) {
      out.$defs = Object.fromEntries(
        Object.entries(out.$defs).map(([name, def]) => [name, convert(def, 1, `/$defs/${name}`)]),
      );
    }
    const types = Array.isArray(out.type) ? out.type : [out.type];
    if (types.includes('array')) {
      if (out.items !== undefined) out.items = convert(out.items, depth, `${path}/items`);
      else fail(`the array at ${path || '/'} does not say what its items are`);
    } else {
      delete out.items;
    }
    if (types.includes('object')) return closeObject(out, depth, path);
    delete out.properties;
    delete out.required;
    delete out.additionalProperties;
    return out;
  };

  const closeObject = (out: Json, depth: number, path: string): Json => {
    const fixed = isObject(out.properties) && Object.keys(out.properties).length > 0;
    // A map (`additionalProperties: {…}`) or an object of unknown keys cannot be closed.
    if (isObject(out.additionalProperties) || (!fixed && out.additionalProperties !== false)) {
      fail(`the object at ${path || '/'} has no fixed properties`);
    }
    const given = isObject(out.properties) ? out.properties : {};
    const required = new Set(Array.isArray(out.required) ? (out.required as string[]) : []);
    const converted: Json = {};
    for (const [name, sub] of Object.entries(given)) {
      properties += 1;
      if (properties > profile.maxProperties) fail(`more than ${profile.maxProperties} properties`);
      const strict = convert(sub, depth + 1, `${path}/properties/${name}`);
      converted[name] = profile.requireAll && !required.has(name) ? nullable(strict) : strict;
    }
    out.properties = converted;
    const names = profile.requireAll ? Object.keys(converted) : [...required].filter((n) => n in converted);
    if (names.length > 0 || profile.requireAll) out.required = names;
    else delete out.required;
    out.additionalProperties = false;
    return out;
  };

  const nullable = (schema: Json): Json => {
    if (acceptsNull(schema)) return schema;
    if (Array.isArray(schema.enum)) {
      const withNull: Json = { ...schema, enum: [...schema.enum, null] };
      if (schema.type !== undefined) withNull.type = addNullType(schema.type);
      return withNull;
    }
    if (schema.type !== undefined && schema.$ref === undefined && schema.anyOf === undefined) {
      return { ...schema, type: addNullType(schema.type) };
    }
    const { description, ...rest } = schema;
    if (Array.isArray(rest.anyOf) && Object.keys(rest).length === 1) {
      return {
        ...(description !== undefined ? { description } : {}),
        anyOf: [...rest.anyOf, { type: 'null' }],
      };
    }
    return { ...(description !== undefined ? { description } : {}), anyOf: [rest, { type: 'null' }] };
  };

  try {
    const root = convert(profile.refs ? schema : inlineRefs(schema), 1, '');
    if (root.type !== 'object') fail('the root is not an object');
    return { ok: true, schema: root };
  } catch (error) {
    if (error instanceof Inexpressible) return { ok: false, reason: error.message };
    throw error;
  }
}

/** Decodes the `$defs` name of a local reference (`#/$defs/<name>`), or `undefined`. */
function defName(ref: unknown): string | undefined {
  if (typeof ref !== 'string') return undefined;
  const name = /^#\/\$defs\/([^/]+)$/.exec(ref)?.[1];
  return name === undefined ? undefined : decodeURIComponent(name).replace(/~1/g, '/').replace(/~0/g, '~');
}

/**
 * The schema with each `$ref` into `$defs` replaced by its target, for a strict mode without
 * references; a recursive schema cannot be written out and fails.
 */
function inlineRefs(schema: unknown): unknown {
  const defs = isObject(schema) && isObject(schema.$defs) ? schema.$defs : {};
  const inline = (node: unknown, trail: readonly string[]): unknown => {
    if (!isObject(node)) return node;
    const name = defName(node.$ref);
    if (name !== undefined) {
      if (trail.includes(name)) throw new Inexpressible(`a recursive schema ($defs/${name})`);
      if (!Object.hasOwn(defs, name)) throw new Inexpressible(`an unknown reference ${String(node.$ref)}`);
      const { $ref: _ref, ...siblings } = node;
      const target = inline(defs[name], [...trail, name]);
      return isObject(target) ? { ...target, ...siblings } : target;
    }
    return mapSubschemas(node, (sub) => inline(sub, trail));
  };
  if (!isObject(schema)) return schema;
  const { $defs: _defs, ...root } = schema;
  return inline(root, []);
}

function addNullType(type: unknown): unknown {
  if (Array.isArray(type)) return type.includes('null') ? type : [...type, 'null'];
  return type === 'null' ? type : [type, 'null'];
}

/** Whether a schema says outright that `null` is a valid value. */
function acceptsNull(schema: unknown): boolean {
  if (!isObject(schema)) return schema === true;
  if (schema.type === 'null' || (Array.isArray(schema.type) && schema.type.includes('null'))) return true;
  if (Array.isArray(schema.enum) && schema.enum.includes(null)) return true;
  if ('const' in schema && schema.const === null) return true;
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches) && branches.some(acceptsNull)) return true;
  }
  return false;
}

/**
 * The arguments of a strict-mode call made fit for the server: OpenAI's strict mode makes the
 * model send `null` for every optional property it leaves out, and the original schema may not
 * accept `null` there, so such a `null` is removed. A `null` the original schema accepts stays.
 * Branches of `anyOf`/`oneOf` are not entered (which one applies is not known here).
 */
export function dropOptionalNulls(schema: unknown, value: unknown): unknown {
  const root = isObject(schema) ? schema : {};
  const defs = isObject(root.$defs) ? root.$defs : {};
  const resolve = (node: unknown, seen = 0): unknown => {
    if (!isObject(node) || typeof node.$ref !== 'string' || seen > 32) return node;
    const name = defName(node.$ref);
    return name === undefined ? node : resolve(defs[name], seen + 1);
  };
  const walk = (node: unknown, v: unknown): unknown => {
    const s = resolve(node);
    if (!isObject(s)) return v;
    if (Array.isArray(v)) return isObject(s.items) ? v.map((item) => walk(s.items, item)) : v;
    if (!isObject(v)) return v;
    const props = isObject(s.properties) ? s.properties : {};
    const required = new Set(Array.isArray(s.required) ? s.required : []);
    const out: Json = {};
    for (const [key, item] of Object.entries(v)) {
      const sub = Object.hasOwn(props, key) ? props[key] : undefined;
      if (item === null && sub !== undefined && !required.has(key) && !acceptsNull(resolve(sub))) continue;
      out[key] = sub === undefined ? item : walk(sub, item);
    }
    return out;
  };
  return walk(root, value);
}
