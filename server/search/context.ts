/**
 * What a document says about an operation outside the operation itself, for search: the
 * descriptions of its tags ("Activity APIs provide access to notifications, subscriptions, and
 * timelines") and the description of what a success answers (Stripe's dispute object: "A dispute
 * occurs when a customer questions your charge with their card issuer"). Documents explain their
 * domain there in plain words; an operation's own text is often a bare "Returns a list of your
 * disputes." Read on the compile worker with the catalog, never stored in the catalog.
 */
import { follow } from '../catalog/operations.ts';
import { child, isObject } from '../catalog/pointer.ts';
import type { JsonObject } from '../catalog/types.ts';

/** An operation's context is read this far. */
const CONTEXT_CHARS = 600;
/** The answers read, first found first: a success (an error's schema says nothing of the operation). */
const SUCCESS = ['200', '201', '202', '2XX'];
/** The property names of an answer read, at most: an answer's first fields are its own, then its links. */
const ANSWER_FIELDS = 40;
/** `allOf` parts read into an answer's fields this deep (a schema extending another that extends one). */
const ALL_OF_DEPTH = 4;

/** Where a tool's operation is in the document. */
export interface OperationPlace {
  method: string;
  pathTemplate: string;
  /** The document's path key when it differs from the template (`/files/{id}#add_shared_link`). */
  documentPath?: string;
}

/** What the document says around an operation. */
export interface OperationContext {
  /** Its tags' descriptions and the description of what a success answers ('' when none). */
  text: string;
  /**
   * The property names of what a success answers (`online`, `presence`; of its items when it
   * answers a list): what a question about the answer asks for ("is Karen online?").
   */
  answers: string[];
}

/** The context of each operation, in the order given. */
export function operationContexts(
  document: JsonObject,
  places: readonly OperationPlace[],
): OperationContext[] {
  const tagDescriptions = new Map<string, string>();
  if (Array.isArray(document.tags))
    for (const tag of document.tags)
      if (isObject(tag) && typeof tag.name === 'string' && typeof tag.description === 'string')
        tagDescriptions.set(tag.name, tag.description);
  const paths = isObject(document.paths) ? document.paths : {};
  return places.map((place) => {
    const key = place.documentPath ?? place.pathTemplate;
    const item = follow(document, paths[key], child('/paths', key)).value;
    const operation = isObject(item) ? item[place.method.toLowerCase()] : undefined;
    if (!isObject(operation)) return { text: '', answers: [] };
    const parts: string[] = [];
    if (Array.isArray(operation.tags))
      for (const tag of operation.tags) {
        const description = typeof tag === 'string' ? tagDescriptions.get(tag) : undefined;
        if (description) parts.push(description);
      }
    const schema = successSchema(document, operation);
    const answered = schema ? subject(schema) : null;
    if (answered) parts.push(answered);
    const answers = schema ? answerFields(document, schema).slice(0, ANSWER_FIELDS) : [];
    return { text: parts.join(' ').slice(0, CONTEXT_CHARS), answers };
  });
}

/** The description (else title) of a schema. */
function subject(schema: JsonObject): string | null {
  if (typeof schema.description === 'string') return schema.description;
  return typeof schema.title === 'string' ? schema.title : null;
}

/**
 * The field names of an answer; of a list envelope (`{ data: [...], has_more }`: its only array
 * property), the items' names after the envelope's own.
 */
function answerFields(document: JsonObject, schema: JsonObject): string[] {
  const names = fieldNames(document, schema, ALL_OF_DEPTH);
  if (!isObject(schema.properties)) return names;
  const arrays = Object.values(schema.properties)
    .map((value) => follow(document, value, '').value)
    .filter((value) => isObject(value) && value.type === 'array') as JsonObject[];
  if (arrays.length !== 1) return names;
  const items = follow(document, (arrays[0] as JsonObject).items, '').value;
  return isObject(items) ? [...new Set([...names, ...fieldNames(document, items, ALL_OF_DEPTH)])] : names;
}

/** A schema's property names, its `allOf` parts' after its own, each once. */
function fieldNames(document: JsonObject, schema: JsonObject, depth: number): string[] {
  const names = isObject(schema.properties) ? Object.keys(schema.properties) : [];
  if (depth > 0 && Array.isArray(schema.allOf))
    for (const part of schema.allOf) {
      const resolved = follow(document, part, '').value;
      if (isObject(resolved)) names.push(...fieldNames(document, resolved, depth - 1));
    }
  return [...new Set(names)];
}

/** The schema of what a success answers, or of the items of a list it answers. */
function successSchema(document: JsonObject, operation: JsonObject): JsonObject | null {
  const responses = operation.responses;
  if (!isObject(responses)) return null;
  const status = SUCCESS.find((code) => code in responses);
  if (status === undefined) return null;
  const response = follow(document, responses[status], '').value;
  if (!isObject(response)) return null;
  const content = isObject(response.content) ? response.content : null;
  const media = content ? (content['application/json'] ?? Object.values(content)[0]) : null;
  let schema = follow(document, isObject(media) ? media.schema : response.schema, '').value;
  if (isObject(schema) && schema.type === 'array') schema = follow(document, schema.items, '').value;
  return isObject(schema) ? schema : null;
}
