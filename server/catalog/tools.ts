/**
 * A checked, dereferenced document → its tools: one per operation with an `operationId`
 * (CONTRACT.md §5), each with the JSON Schema of the closed `parameters` object (§2).
 */
import { pickJsonContent } from './media.ts';
import {
  credentialParameterKeys,
  excludedBecause,
  listOperations,
  mergedParameters,
  type OperationEntry,
} from './operations.ts';
import { isObject, setOwn } from './pointer.ts';
import { createSchemaConverter, type SchemaConverter } from './schema.ts';
import {
  type JsonObject,
  type JsonSchema,
  type OpenApiDocument,
  type OpenApiVersion,
  type ParameterLocation,
  type ParameterStyle,
  STYLES_BY_LOCATION,
  type Tool,
  type ToolBody,
  type ToolParameter,
} from './types.ts';

export const JSON_SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

/** The tools of a document that `parseDocument` accepted (it has already rejected what can't be a tool). */
export function deriveTools(document: OpenApiDocument, version: OpenApiVersion): Tool[] {
  const credentials = credentialParameterKeys(document);
  const tools: Tool[] = [];
  for (const entry of listOperations(document)) {
    const operation = entry.operation.value;
    if (typeof operation.operationId !== 'string') continue;
    const converter = createSchemaConverter(document, version);
    const sources = mergedParameters(document, entry)
      .map((located) => located.value)
      .filter((parameter) => excludedBecause(parameter, credentials) === null);
    const parameters = sources.map((source) => toolParameter(source, converter));
    const body = toolBody(operation.requestBody, converter);
    tools.push({
      name: operation.operationId,
      method: entry.method.toUpperCase(),
      pathTemplate: entry.path,
      description: describe(entry),
      parameters,
      body,
      scopes: scopesOf(document, operation),
      accept: acceptOf(operation),
      parametersSchema: parametersSchema(parameters, sources, body, operation.requestBody, converter),
    });
  }
  return tools;
}

function toolParameter(parameter: JsonObject, converter: SchemaConverter): ToolParameter {
  const location = parameter.in as ParameterLocation;
  const style = (parameter.style as ParameterStyle | undefined) ?? STYLES_BY_LOCATION[location][0] ?? 'form';
  const content = isObject(parameter.content) ? Object.entries(parameter.content)[0] : undefined;
  const media = content && isObject(content[1]) ? content[1] : undefined;
  return {
    name: String(parameter.name),
    in: location,
    required: location === 'path' || parameter.required === true,
    schema: converter.convert(content ? media?.schema : parameter.schema),
    style,
    explode: typeof parameter.explode === 'boolean' ? parameter.explode : style === 'form',
    allowReserved: location === 'query' && parameter.allowReserved === true,
    ...(content ? { contentType: content[0] } : {}),
  };
}

/** The JSON body, or null when there is none or only a non-JSON one (then optional: checks refused a required one). */
function toolBody(requestBody: unknown, converter: SchemaConverter): ToolBody | null {
  if (!isObject(requestBody)) return null;
  const json = pickJsonContent(requestBody.content);
  if (!json) return null;
  return {
    required: requestBody.required === true,
    schema: converter.convert(isObject(json.media) ? json.media.schema : undefined),
    contentType: json.contentType,
  };
}

function describe(entry: OperationEntry): string {
  const { summary, description } = entry.operation.value;
  const parts = [summary, description].filter(
    (text): text is string => typeof text === 'string' && text.trim() !== '',
  );
  return parts.length > 0 ? parts.join('\n\n') : `${entry.method.toUpperCase()} ${entry.path}`;
}

/**
 * OAuth scopes the operation needs: those its `security` (else the document's) lists for
 * oauth2/openIdConnect schemes. Alternatives are unioned: the tool declares every scope it may use.
 */
function scopesOf(document: OpenApiDocument, operation: JsonObject): string[] {
  const requirements = Array.isArray(operation.security) ? operation.security : document.security;
  const components = isObject(document.components) ? document.components : {};
  const schemes = isObject(components.securitySchemes) ? components.securitySchemes : {};
  const scopes = new Set<string>();
  for (const requirement of Array.isArray(requirements) ? requirements : []) {
    if (!isObject(requirement)) continue;
    for (const [name, list] of Object.entries(requirement)) {
      const scheme = schemes[name];
      if (!isObject(scheme) || (scheme.type !== 'oauth2' && scheme.type !== 'openIdConnect')) continue;
      for (const scope of Array.isArray(list) ? list : []) {
        if (typeof scope === 'string') scopes.add(scope);
      }
    }
  }
  return [...scopes].sort();
}

/** Media types of the 2xx responses, as an Accept header value. */
function acceptOf(operation: JsonObject): string | null {
  const responses = isObject(operation.responses) ? operation.responses : {};
  const types = new Set<string>();
  for (const [status, response] of Object.entries(responses)) {
    if (!/^2(\d\d|XX)$/i.test(status) || !isObject(response) || !isObject(response.content)) continue;
    for (const type of Object.keys(response.content)) types.add(type);
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

/** The closed `parameters` object: each parameter by name, the JSON body under `body`. */
function parametersSchema(
  parameters: ToolParameter[],
  sources: JsonObject[],
  body: ToolBody | null,
  requestBody: unknown,
  converter: SchemaConverter,
): JsonObject {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [index, parameter] of parameters.entries()) {
    const source = sources[index] ?? {};
    setOwn(
      properties,
      parameter.name,
      annotate(parameter.schema, {
        description: typeof source.description === 'string' ? source.description : undefined,
        deprecated: source.deprecated === true ? true : undefined,
      }),
    );
    if (parameter.required) required.push(parameter.name);
  }
  if (body) {
    const description = isObject(requestBody) ? requestBody.description : undefined;
    properties.body = annotate(body.schema, {
      description: typeof description === 'string' ? description : undefined,
    });
    if (body.required) required.push('body');
  }
  const defs = converter.defs();
  return {
    $schema: JSON_SCHEMA_DIALECT,
    type: 'object',
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
    ...(Object.keys(defs).length > 0 ? { $defs: defs } : {}),
  };
}
