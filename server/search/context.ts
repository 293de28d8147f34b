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

/** Where a tool's operation is in the document. */
export interface OperationPlace {
  method: string;
  pathTemplate: string;
  /** The document's path key when it differs from the template (`/files/{id}#add_shared_link`). */
  documentPath?: string;
}

/** The context of each operation, in the order given ('' where the document says nothing). */
export function operationContexts(document: JsonObject, places: readonly OperationPlace[]): string[] {
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
    if (!isObject(operation)) return '';
    const parts: string[] = [];
    if (Array.isArray(operation.tags))
      for (const tag of operation.tags) {
        const description = typeof tag === 'string' ? tagDescriptions.get(tag) : undefined;
        if (description) parts.push(description);
      }
    const answered = successSubject(document, operation);
    if (answered) parts.push(answered);
    return parts.join(' ').slice(0, CONTEXT_CHARS);
  });
}

/** The description (else title) of what a success answers, or of the items of a list it answers. */
function successSubject(document: JsonObject, operation: JsonObject): string | null {
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
  if (!isObject(schema)) return null;
  if (typeof schema.description === 'string') return schema.description;
  return typeof schema.title === 'string' ? schema.title : null;
}
