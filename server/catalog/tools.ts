/**
 * A document → its tools (docs/reference.md "Administration"): every operation becomes a tool, named by the contract's
 * rule, or is listed as skipped with the reason it can't be served. Each tool carries the JSON
 * Schema of the closed `parameters` object a caller sends (§2).
 */
import type { Ajv2020 } from 'ajv/dist/2020.js';
import { toolNameFrom, toolNameFromPath, uniqueToolName } from '../../shared/tool-names.ts';
import { binaryBodySchema, FORM, pickContent, withFileProperties } from './media.ts';
import {
  excludedBecause,
  follow,
  listOperations,
  mergedParameters,
  type OperationEntry,
  parameterKey,
  securityParameterKeys,
  TOKEN,
  templateNames,
} from './operations.ts';
import { child, getAt, isObject, refToPointer, setOwn } from './pointer.ts';
import { type Converted, prune, SchemaConverter, Unservable } from './schema.ts';
import {
  type Issue,
  type JsonObject,
  type JsonSchema,
  type OpenApiVersion,
  PARAMETER_LOCATIONS,
  type ParameterLocation,
  type ParameterStyle,
  type PropertyEncoding,
  type ServiceParameter,
  type SkippedOperation,
  STYLES_BY_LOCATION,
  type Tool,
  type ToolBody,
  type ToolParameter,
} from './types.ts';
import { errorsToIssues } from './validate.ts';

export const JSON_SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

/**
 * A `$ref` bomb: a request schema whose full inline expansion (recursion left as references) would
 * hold more nodes than this floor and than the document's node count to the power 1.5. Measured on
 * the corpus (BENCHMARKS.md): real documents stay below, the largest ratio being DocuSign's envelope
 * (~20,000 nodes expanding to between 0.4 and 2 million, under its 2.85 million); a 2.6 KB bomb of 12
 * schemas each referencing the previous twice expands to 8,000–16,000 nodes against a limit of 2,000.
 * Tools never expand schemas; the limit only keeps such documents out.
 */
export const EXPANSION_FLOOR = 2_000;
/**
 * Characters of `$defs` a tool's schema carries at most: deeper definitions are left open (see
 * `SchemaConverter.defsFor`). Kubernetes' largest tools come to about 150 KB without it, Microsoft
 * Graph's and DocuSign's to 0.6–1 MB.
 */
export const DEFS_BUDGET = 64_000;
export const EXPANSION_EXPONENT = 1.5;

export interface DeriveOptions {
  /** The parameter the app's api_key auth fills in, left out of every tool. */
  service?: ServiceParameter;
  /** Meta-validates each tool's schema, so one ajv can't compile is skipped at registration. */
  ajv: Ajv2020;
  /** JSON nodes of the whole document, the measure a request schema's expansion is compared with. */
  documentNodes: number;
  /** Prefix of issue pointers (the document is the registration's `openapi`). */
  pointerPrefix: string;
}

export interface Derived {
  tools: Tool[];
  skipped: SkippedOperation[];
  /** Problems that refuse the whole document (a `$ref` bomb). */
  issues: Issue[];
}

export function deriveTools(document: JsonObject, version: OpenApiVersion, options: DeriveOptions): Derived {
  const converter = new SchemaConverter(document, version);
  const entries = listOperations(document);
  const names = assignNames(entries);
  const tools: Tool[] = [];
  const skipped: SkippedOperation[] = [];
  const issues: Issue[] = [];
  const bombLimit = Math.max(EXPANSION_FLOOR, Math.ceil(options.documentNodes ** EXPANSION_EXPONENT));

  const derived: { tool: Tool; converted: Converted[]; pointer: string }[] = [];
  for (const [index, entry] of entries.entries()) {
    const operationId = entry.operation.value.operationId;
    try {
      derived.push({
        ...deriveTool(document, entry, names[index] as string, converter, options),
        pointer: entry.operation.pointer,
      });
    } catch (error) {
      if (!(error instanceof Unservable)) throw error;
      skipped.push({
        method: entry.method.toUpperCase(),
        path: entry.path,
        ...(typeof operationId === 'string' ? { operationId } : {}),
        reason: `${upperFirst(error.message)}.`,
      });
    }
  }
  // Measured once every definition is known, so recursive ones are told apart from a bomb.
  for (const { tool, converted, pointer } of derived) {
    const expanded = converted.reduce(
      (total, part) => Math.min(bombLimit + 1, total + converter.expandedSize(part, bombLimit + 1)),
      0,
    );
    if (expanded > bombLimit) {
      issues.push({
        path: options.pointerPrefix + pointer,
        message: `The request schemas of this operation would expand to more than ${bombLimit} nodes (references nested without bound, a "$ref bomb").`,
      });
    }
    tools.push(tool);
  }
  return { tools, skipped, issues };
}

/** Names by the contract's rule, in document order; a repeated name gets `_2`, `_3`, …. */
function assignNames(entries: OperationEntry[]): string[] {
  const taken = new Set<string>();
  return entries.map((entry) => {
    const id = entry.operation.value.operationId;
    const base =
      (typeof id === 'string' ? toolNameFrom(id) : '') ||
      toolNameFromPath(entry.method, entry.path) ||
      entry.method;
    return uniqueToolName(base, taken);
  });
}

function deriveTool(
  document: JsonObject,
  entry: OperationEntry,
  name: string,
  converter: SchemaConverter,
  options: DeriveOptions,
): { tool: Tool; converted: Converted[] } {
  const operation = entry.operation.value;
  const { path, fixedQuery } = splitPathKey(entry.path);
  checkTemplate(path);

  const credentials = securityParameterKeys(document, operation);
  if (options.service) credentials.add(parameterKey(options.service.in, options.service.name));
  const templated = templateNames(path);
  const sources: JsonObject[] = [];
  for (const { value } of mergedParameters(document, entry)) {
    checkParameter(value);
    if (excludedBecause(value, credentials) !== null) continue;
    // A declared path parameter the path does not use can't be sent anywhere: it is left out.
    if (value.in === 'path' && !templated.includes(String(value.name))) continue;
    sources.push(value);
  }
  for (const missing of templated.filter((n) => !sources.some((p) => p.in === 'path' && p.name === n))) {
    // Undeclared in the document, yet needed to build the URL: a required string.
    sources.push({ name: missing, in: 'path', required: true, schema: { type: 'string' } });
  }

  const requestBody = resolveRequestBody(document, entry);
  const keys = parameterKeys(sources, requestBody !== null);
  const parameters: ToolParameter[] = [];
  const converted: Converted[] = [];
  const properties: JsonObject = {};
  const required: string[] = [];
  for (const [index, source] of sources.entries()) {
    const key = keys[index] as string;
    const { parameter, schema } = toolParameter(source, key);
    const part = converter.convert(schema);
    converted.push(part);
    parameters.push(parameter);
    setOwn(
      properties,
      key,
      annotate(part.schema, {
        description: typeof source.description === 'string' ? source.description : undefined,
        deprecated: source.deprecated === true ? true : undefined,
      }),
    );
    if (parameter.required) required.push(key);
  }

  let body: ToolBody | null = null;
  if (requestBody) {
    const derived = toolBody(document, requestBody, converter);
    body = derived.body;
    converted.push(derived.converted);
    properties.body = annotate(derived.converted.schema, {
      description: typeof requestBody.description === 'string' ? requestBody.description : undefined,
    });
    if (body.required) required.push('body');
  }

  const { defs, cut } = converter.defsFor(
    converted.flatMap((part) => [...part.refs.keys()]),
    DEFS_BUDGET,
  );
  if (cut.size > 0) {
    for (const [key, value] of Object.entries(properties))
      setOwn(properties, key, prune(value as JsonSchema, cut));
  }
  const parametersSchema: JsonObject = {
    $schema: JSON_SCHEMA_DIALECT,
    type: 'object',
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
    ...(Object.keys(defs).length > 0 ? { $defs: defs } : {}),
  };
  const badPattern = findBadPattern(parametersSchema);
  if (badPattern !== null) {
    throw new Unservable(
      `its parameter schema has a pattern that is not a regular expression: "${badPattern}"`,
    );
  }
  if (!options.ajv.validateSchema(parametersSchema)) {
    const issue = errorsToIssues(options.ajv.errors ?? [], 'schema')[0];
    throw new Unservable(
      `its parameter schema is not a valid JSON Schema${issue ? ` (at ${issue.path || '/'}: ${issue.message.replace(/\.$/, '')})` : ''}`,
    );
  }

  const summary = text(operation.summary);
  const operationDescription = text(operation.description);
  return {
    converted,
    tool: {
      name,
      operationId: typeof operation.operationId === 'string' ? operation.operationId : null,
      method: entry.method.toUpperCase(),
      pathTemplate: path,
      ...(path === entry.path ? {} : { documentPath: entry.path }),
      fixedQuery,
      summary,
      operationDescription,
      description:
        [summary, operationDescription].filter((part) => part !== null).join('\n\n') ||
        `${entry.method.toUpperCase()} ${entry.path}`,
      parameters,
      body,
      scopes: scopesOf(document, operation),
      tags: Array.isArray(operation.tags)
        ? operation.tags.filter((tag): tag is string => typeof tag === 'string').slice(0, 20)
        : [],
      accept: acceptOf(document, operation),
      parametersSchema,
    },
  };
}

/**
 * The first `pattern` (or `patternProperties` key) of a schema that no engine compiles, or null.
 * Compiled like the validator does: Unicode mode, else plain mode (`validate.ts`).
 */
export function findBadPattern(schema: unknown): string | null {
  const compiles = (pattern: string) => {
    for (const flags of ['u', '']) {
      try {
        new RegExp(pattern, flags);
        return true;
      } catch {}
    }
    return false;
  };
  const pending: unknown[] = [schema];
  while (pending.length > 0) {
    const node = pending.pop();
    if (Array.isArray(node)) pending.push(...node);
    if (!isObject(node)) continue;
    if (typeof node.pattern === 'string' && !compiles(node.pattern)) return node.pattern;
    if (isObject(node.patternProperties)) {
      const bad = Object.keys(node.patternProperties).find((key) => !compiles(key));
      if (bad !== undefined) return bad;
    }
    for (const [key, value] of Object.entries(node)) {
      if (key !== 'enum' && key !== 'const' && key !== 'examples' && key !== 'default') pending.push(value);
    }
  }
  return null;
}

/** `/files/{id}#add_shared_link` → `/files/{id}`; `/search?type=user` → `/search` + `type=user`. */
export function splitPathKey(key: string): { path: string; fixedQuery: string | null } {
  const withoutFragment = key.split('#')[0] ?? '';
  const queryAt = withoutFragment.indexOf('?');
  if (queryAt === -1) return { path: withoutFragment, fixedQuery: null };
  const query = withoutFragment.slice(queryAt + 1);
  return { path: withoutFragment.slice(0, queryAt), fixedQuery: query === '' ? null : query };
}

function checkTemplate(path: string): void {
  if (!path.startsWith('/')) throw new Unservable(`its path "${path}" does not begin with "/"`);
  let open = false;
  for (const char of path) {
    if (char !== '{' && char !== '}') continue;
    if ((char === '{') === open) throw new Unservable(`its path "${path}" has unbalanced braces`);
    open = char === '{';
  }
  if (open) throw new Unservable(`its path "${path}" has unbalanced braces`);
  const names = templateNames(path);
  if (names.includes('')) throw new Unservable(`its path "${path}" has an empty {} expression`);
  // A name used twice (OpenAPI forbids it, real documents do it) takes the same value in both places.
}

function checkParameter(parameter: JsonObject): void {
  const name = String(parameter.name);
  const location = parameter.in as ParameterLocation;
  if (!PARAMETER_LOCATIONS.includes(location)) {
    throw new Unservable(
      `parameter "${name}" is in "${String(parameter.in)}", not path, query, header or cookie`,
    );
  }
  // JavaScript validators (ajv among them) can't tell that property from an object's prototype.
  if (name === '__proto__') throw new Unservable('a parameter is named "__proto__"');
  if ((location === 'header' || location === 'cookie') && !TOKEN.test(name)) {
    throw new Unservable(`"${name}" is not a valid ${location} name`);
  }
  if (
    parameter.style !== undefined &&
    !STYLES_BY_LOCATION[location].includes(parameter.style as ParameterStyle)
  ) {
    throw new Unservable(
      `parameter "${name}" has style "${String(parameter.style)}", which a ${location} parameter can't have`,
    );
  }
}

/**
 * Keys in `parameters`: a name held by two parameters (or `body` beside a request body) stays with
 * the path parameter, else the first; each other one becomes `<in>.<name>`.
 */
function parameterKeys(sources: JsonObject[], hasBody: boolean): string[] {
  const keeper = new Map<string, JsonObject>();
  for (const source of sources) {
    const name = String(source.name);
    const current = keeper.get(name);
    if (!current || (source.in === 'path' && current.in !== 'path')) keeper.set(name, source);
  }
  return sources.map((source) => {
    const name = String(source.name);
    const clashes = keeper.get(name) !== source || (hasBody && name === 'body');
    return clashes ? `${String(source.in)}.${name}` : name;
  });
}

function toolParameter(source: JsonObject, key: string): { parameter: ToolParameter; schema: unknown } {
  const location = source.in as ParameterLocation;
  const style = (source.style as ParameterStyle | undefined) ?? STYLES_BY_LOCATION[location][0] ?? 'form';
  const content = isObject(source.content) ? Object.entries(source.content)[0] : undefined;
  const media = content && isObject(content[1]) ? content[1] : undefined;
  const reserved =
    location === 'query' || location === 'path'
      ? source.allowReserved === true || (location === 'path' && source['x-multi-segment'] === true)
      : false;
  return {
    parameter: {
      key,
      name: String(source.name),
      in: location,
      required: location === 'path' || source.required === true,
      style,
      explode: typeof source.explode === 'boolean' ? source.explode : style === 'form',
      allowReserved: reserved,
      ...(content ? { contentType: content[0] } : {}),
    },
    schema: content ? media?.schema : source.schema,
  };
}

function resolveRequestBody(document: JsonObject, entry: OperationEntry): JsonObject | null {
  const raw = entry.operation.value.requestBody;
  if (raw === undefined || raw === null) return null;
  const { value } = follow(document, raw, child(entry.operation.pointer, 'requestBody'));
  if (isObject(raw) && typeof raw.$ref === 'string' && (!isObject(value) || typeof value.$ref === 'string')) {
    throw new Unservable(`its request body reference "${raw.$ref}" can't be resolved inside the document`);
  }
  if (!isObject(value) || !isObject(value.content) || Object.keys(value.content).length === 0) {
    if (isObject(value) && value.required === true)
      throw new Unservable('its required request body names no media type');
    return null;
  }
  return value;
}

function toolBody(
  document: JsonObject,
  requestBody: JsonObject,
  converter: SchemaConverter,
): { body: ToolBody; converted: Converted } {
  const picked = pickContent(requestBody.content as JsonObject);
  if (!picked) throw new Unservable('its request body names no media type');
  const required = requestBody.required === true;
  const schema = picked.media.schema;
  const encoding = encodingOf(picked.media.encoding);
  switch (picked.kind) {
    case 'json':
      return {
        body: { required, kind: 'json', contentType: picked.contentType },
        converted: converter.convert(schema),
      };
    case 'form': {
      const converted = converter.convert(schema);
      return {
        body: { required, kind: 'form', contentType: FORM, ...(encoding ? { encoding } : {}) },
        converted,
      };
    }
    case 'multipart': {
      const converted = converter.convert(schema);
      const resolve = (node: unknown) => resolveSchema(document, node);
      const withFiles = withFileProperties(converted.schema, schema, resolve, encoding ?? {});
      return {
        body: {
          required,
          kind: 'multipart',
          contentType: picked.contentType,
          ...(encoding ? { encoding } : {}),
          ...(withFiles.files.length > 0 ? { files: withFiles.files } : {}),
        },
        converted: { ...converted, schema: withFiles.schema },
      };
    }
    case 'text':
      return {
        body: { required, kind: 'text', contentType: picked.contentType },
        converted: { schema: { type: 'string' }, refs: new Map(), nodes: 1 },
      };
    case 'binary':
      return {
        body: { required, kind: 'binary', contentType: picked.contentType },
        converted: { schema: binaryBodySchema(picked.contentType), refs: new Map(), nodes: 1 },
      };
  }
}

/** A schema with its `$ref` chain followed (for reading formats, never for output). */
function resolveSchema(document: JsonObject, schema: unknown): unknown {
  let node = schema;
  for (let hops = 0; hops < 16 && isObject(node) && typeof node.$ref === 'string'; hops += 1) {
    const pointer = refToPointer(node.$ref);
    if (pointer === null) return undefined;
    node = getAt(document, pointer);
  }
  return node;
}

function encodingOf(raw: unknown): Record<string, PropertyEncoding> | undefined {
  if (!isObject(raw)) return undefined;
  const encoding: Record<string, PropertyEncoding> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (!isObject(value)) continue;
    setOwn(encoding, name, {
      ...(typeof value.style === 'string' ? { style: value.style } : {}),
      ...(typeof value.explode === 'boolean' ? { explode: value.explode } : {}),
      ...(typeof value.contentType === 'string' ? { contentType: value.contentType } : {}),
    });
  }
  return Object.keys(encoding).length > 0 ? encoding : undefined;
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value : null;
}

function upperFirst(message: string): string {
  return message.charAt(0).toUpperCase() + message.slice(1);
}

/**
 * OAuth scopes the operation needs: those its `security` (else the document's) lists for
 * oauth2/openIdConnect schemes. Alternatives are unioned: the tool declares every scope it may use.
 */
function scopesOf(document: JsonObject, operation: JsonObject): string[] {
  const requirements = Array.isArray(operation.security) ? operation.security : document.security;
  const components = isObject(document.components) ? document.components : {};
  const schemes = isObject(components.securitySchemes) ? components.securitySchemes : {};
  const scopes = new Set<string>();
  for (const requirement of Array.isArray(requirements) ? requirements : []) {
    if (!isObject(requirement)) continue;
    for (const [name, list] of Object.entries(requirement)) {
      const scheme = follow(document, schemes[name], '').value;
      if (!isObject(scheme) || (scheme.type !== 'oauth2' && scheme.type !== 'openIdConnect')) continue;
      for (const scope of Array.isArray(list) ? list : []) {
        if (typeof scope === 'string') scopes.add(scope);
      }
    }
  }
  return [...scopes].sort();
}

/** Media types of the 2xx responses, as an Accept header value. */
function acceptOf(document: JsonObject, operation: JsonObject): string | null {
  const responses = isObject(operation.responses) ? operation.responses : {};
  const types = new Set<string>();
  for (const [status, raw] of Object.entries(responses)) {
    if (!/^2(\d\d|XX)$/i.test(status)) continue;
    const response = follow(document, raw, '').value;
    if (!isObject(response) || !isObject(response.content)) continue;
    for (const type of Object.keys(response.content)) {
      // Only what can be a header value: a document's odd key must not break every call.
      if (/^[\x21-\x7e][\x20-\x7e]*$/.test(type)) types.add(type);
    }
  }
  return types.size > 0 ? [...types].join(', ') : null;
}

/** Annotations a caller benefits from, carried from the parameter onto its schema. */
function annotate(schema: JsonSchema, annotations: JsonObject): JsonSchema {
  const extra = Object.fromEntries(Object.entries(annotations).filter(([, value]) => value !== undefined));
  if (Object.keys(extra).length === 0) return schema;
  if (schema === true) return extra;
  if (schema === false || !isObject(schema)) return schema;
  return { ...extra, ...schema };
}
