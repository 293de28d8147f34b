/**
 * Media types of request bodies (docs/reference.md "Administration"): which one of an operation's `content` a tool
 * sends, how its value is written, and what the tool's schema says about it. Where an operation
 * offers several: JSON, then form, then multipart, then a wildcard (sent as JSON), then the first listed.
 */
import { isObject } from './pointer.ts';
import type { BodyKind, JsonObject, JsonSchema } from './types.ts';

/** The media type without parameters, lower-cased: `Application/JSON; charset=utf-8` → `application/json`. */
export function essence(mediaType: string): string {
  const end = mediaType.indexOf(';');
  return (end === -1 ? mediaType : mediaType.slice(0, end)).trim().toLowerCase();
}

export function isJsonMediaType(mediaType: string): boolean {
  const type = essence(mediaType);
  return type === 'application/json' || /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+\+json$/.test(type);
}

export const FORM = 'application/x-www-form-urlencoded';
export const MULTIPART = 'multipart/form-data';

export interface PickedContent {
  kind: BodyKind;
  /** The key in the document's `content` map. */
  key: string;
  /** What is sent as Content-Type. */
  contentType: string;
  media: JsonObject;
}

/** The entry of a `content` map a tool sends, or null when the map is empty. */
export function pickContent(content: JsonObject): PickedContent | null {
  const entries = Object.entries(content).map(([key, media]) => ({
    key,
    type: essence(key),
    media: isObject(media) ? media : {},
  }));
  const pick = (kind: BodyKind, found: (typeof entries)[number] | undefined, contentType?: string) =>
    found ? { kind, key: found.key, contentType: contentType ?? found.key, media: found.media } : null;
  return (
    pick(
      'json',
      entries.find((entry) => entry.type === 'application/json'),
    ) ??
    pick(
      'json',
      entries.find((entry) => isJsonMediaType(entry.type)),
    ) ??
    pick(
      'form',
      entries.find((entry) => entry.type === FORM),
    ) ??
    pick(
      'multipart',
      entries.find((entry) => entry.type === MULTIPART),
    ) ??
    // A wildcard admits JSON, what such documents (often converted from Swagger 2.0) describe.
    pick(
      'json',
      entries.find((entry) => entry.type === '*/*' || entry.type === 'application/*'),
      'application/json',
    ) ??
    pick(entries[0]?.type === 'text/plain' ? 'text' : 'binary', entries[0])
  );
}

/** How a file travels inside `parameters` (a multipart file property, or a whole body of another type). */
export const BASE64_PATTERN = '^[A-Za-z0-9+/]*={0,2}$';

export function fileSchema(description?: string): JsonObject {
  return {
    type: 'object',
    ...(description ? { description } : {}),
    properties: {
      base64: { type: 'string', contentEncoding: 'base64', pattern: BASE64_PATTERN },
      filename: { type: 'string' },
      content_type: { type: 'string' },
    },
    required: ['base64'],
    additionalProperties: false,
  };
}

export function binaryBodySchema(contentType: string): JsonObject {
  return {
    type: 'object',
    description: `The body as base64, sent as ${contentType}.`,
    properties: {
      base64: { type: 'string', contentEncoding: 'base64', pattern: BASE64_PATTERN },
      content_type: { type: 'string' },
    },
    required: ['base64'],
    additionalProperties: false,
  };
}

/** Whether a (document) schema describes file content: `format: binary|byte`, a content encoding or media type, or a Swagger `file`. */
export function isFileSchema(schema: unknown): boolean {
  if (!isObject(schema)) return false;
  return (
    schema.format === 'binary' ||
    schema.format === 'byte' ||
    schema.type === 'file' ||
    typeof schema.contentEncoding === 'string' ||
    typeof schema.contentMediaType === 'string'
  );
}

/** `schema` with each file property (or array of files) of its `properties` replaced by the file object schema. */
export function withFileProperties(
  schema: JsonSchema,
  original: unknown,
  resolve: (schema: unknown) => unknown,
  encoding: Record<string, { contentType?: string }>,
): { schema: JsonSchema; files: string[] } {
  const source = resolve(original);
  if (
    !isObject(schema) ||
    !isObject(schema.properties) ||
    !isObject(source) ||
    !isObject(source.properties)
  ) {
    return { schema, files: [] };
  }
  const files: string[] = [];
  const properties: JsonObject = { ...schema.properties };
  for (const [name, raw] of Object.entries(source.properties)) {
    if (!Object.hasOwn(properties, name)) continue;
    const property = resolve(raw);
    const declared = encoding[name]?.contentType;
    const binaryByEncoding = declared !== undefined && !/^(text\/|application\/json)/i.test(declared);
    const items = isObject(property) && property.type === 'array' ? resolve(property.items) : undefined;
    const description =
      isObject(property) && typeof property.description === 'string' ? property.description : undefined;
    if (isFileSchema(property) || (binaryByEncoding && !items)) {
      properties[name] = fileSchema(description);
      files.push(name);
    } else if (items !== undefined && (isFileSchema(items) || binaryByEncoding)) {
      properties[name] = { type: 'array', ...(description ? { description } : {}), items: fileSchema() };
      files.push(name);
    }
  }
  return { schema: { ...schema, properties }, files };
}
