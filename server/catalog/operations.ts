/**
 * Walking a document's operations and their parameters. Works on the registered document (where
 * a parameter may still be a `$ref`, followed here so problems point at the definition) and on the
 * dereferenced one alike.
 */
import { child, getAt, isObject, refToPointer } from './pointer.ts';
import { Unservable } from './schema.ts';
import { HTTP_METHODS, type HttpMethod, type JsonObject } from './types.ts';

/** A node with the pointer where it is defined (the end of its `$ref` chain). */
export interface Located<T = unknown> {
  value: T;
  pointer: string;
}

/** Follows a chain of `$ref`s (already checked to end somewhere) to the definition. */
export function follow(document: unknown, value: unknown, pointer: string): Located {
  let located: Located = { value, pointer };
  for (let hops = 0; hops < 64; hops += 1) {
    const node = located.value;
    if (!isObject(node) || typeof node.$ref !== 'string') return located;
    const target = refToPointer(node.$ref);
    if (target === null) return located;
    located = { value: getAt(document, target), pointer: target };
  }
  return located;
}

export interface OperationEntry {
  path: string;
  method: HttpMethod;
  pathItem: Located<JsonObject>;
  operation: Located<JsonObject>;
}

/** Every operation of `paths`, in document order. Non-object entries are skipped (checks report them). */
export function listOperations(document: JsonObject): OperationEntry[] {
  const entries: OperationEntry[] = [];
  const paths = document.paths;
  if (!isObject(paths)) return entries;
  for (const [path, raw] of Object.entries(paths)) {
    const pathItem = follow(document, raw, child('/paths', path));
    if (!isObject(pathItem.value)) continue;
    for (const method of HTTP_METHODS) {
      const operation = pathItem.value[method];
      if (!isObject(operation)) continue;
      entries.push({
        path,
        method,
        pathItem: pathItem as Located<JsonObject>,
        operation: { value: operation, pointer: child(pathItem.pointer, method) },
      });
    }
  }
  return entries;
}

/**
 * The operation's parameters with the path item's merged in: an operation-level parameter replaces
 * a path-level one of the same name and location. Throws `Unservable` for an entry that is not a
 * parameter (a reference to nothing, no name or location).
 */
export function mergedParameters(document: unknown, entry: OperationEntry): Located<JsonObject>[] {
  const byKey = new Map<string, Located<JsonObject>>();
  for (const owner of [entry.pathItem, entry.operation]) {
    const list = owner.value.parameters;
    if (list === undefined || list === null) continue;
    if (!Array.isArray(list)) throw new Unservable('its parameters are not a list');
    for (const [index, raw] of list.entries()) {
      const parameter = follow(document, raw, child(owner.pointer, 'parameters', index));
      const value = parameter.value;
      if (
        isObject(raw) &&
        typeof raw.$ref === 'string' &&
        (!isObject(value) || typeof value.$ref === 'string')
      ) {
        throw new Unservable(`its parameter reference "${raw.$ref}" can't be resolved inside the document`);
      }
      if (
        !isObject(value) ||
        typeof value.name !== 'string' ||
        value.name === '' ||
        typeof value.in !== 'string'
      ) {
        // An optional parameter without a name can't be sent: real documents have such leftovers.
        if (isObject(value) && value.required !== true && value.in !== 'path') continue;
        throw new Unservable(`parameter ${index + 1} has no name or no location`);
      }
      // Header names are case-insensitive; the others are not.
      byKey.set(parameterKey(value.in, value.name), parameter as Located<JsonObject>);
    }
  }
  return [...byKey.values()];
}

/** Identity of a parameter: its location and name (header names are case-insensitive). */
export function parameterKey(location: string, name: string): string {
  return `${location}\u0000${location === 'header' ? name.toLowerCase() : name}`;
}

/** `{name}` expressions of a path template, in order. */
export function templateNames(path: string): string[] {
  return [...path.matchAll(/\{([^{}]*)\}/g)].map((match) => match[1] ?? '');
}

/** Header parameters OpenAPI says to ignore: these headers are the transport's, not the operation's. */
const SPEC_IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization']);

/**
 * Headers a caller must never set through a parameter: credentials, hop-by-hop and framing
 * headers, and headers upstreams trust for client identity.
 */
export const RESERVED_HEADERS = new Set([
  ...SPEC_IGNORED_HEADERS,
  'accept-encoding',
  'connection',
  'content-encoding',
  'content-length',
  'cookie',
  'expect',
  'forwarded',
  'host',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'set-cookie',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'via',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-real-ip',
]);

/** An RFC 9110 token: what a header or cookie name may be. */
export const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Keys (`parameterKey`) of the parameters the operation's own security schemes name (apiKey
 * schemes of its `security`, else the document's): credentials the service fills in, not parameters.
 */
export function securityParameterKeys(document: JsonObject, operation: JsonObject): Set<string> {
  const keys = new Set<string>();
  const components = document.components;
  const schemes = isObject(components) ? components.securitySchemes : undefined;
  const requirements = Array.isArray(operation.security) ? operation.security : document.security;
  if (!isObject(schemes) || !Array.isArray(requirements)) return keys;
  for (const requirement of requirements) {
    if (!isObject(requirement)) continue;
    for (const name of Object.keys(requirement)) {
      const scheme = follow(document, schemes[name], '').value;
      if (isObject(scheme) && scheme.type === 'apiKey' && typeof scheme.name === 'string') {
        keys.add(parameterKey(String(scheme.in), scheme.name));
      }
    }
  }
  return keys;
}

/**
 * Why a parameter is not part of the tool, or null when it is. Reserved headers (`Authorization`
 * among them) and parameters that carry a credential are supplied by the service, never by the caller.
 */
export function excludedBecause(parameter: JsonObject, credentials: Set<string>): string | null {
  const name = String(parameter.name);
  const location = String(parameter.in);
  if (location === 'header' && RESERVED_HEADERS.has(name.toLowerCase())) return 'reserved header';
  if (credentials.has(parameterKey(location, name))) return 'credential';
  return null;
}
