/** JSON Pointers (RFC 6901): building them for issues and resolving internal `$ref`s. */

export function escapeToken(token: string | number): string {
  return String(token).replaceAll('~', '~0').replaceAll('/', '~1');
}

export function unescapeToken(token: string): string {
  return token.replaceAll('~1', '/').replaceAll('~0', '~');
}

/** Appends tokens to a pointer: `child('/paths', '/items', 'get')` → `/paths/~1items/get`. */
export function child(pointer: string, ...tokens: (string | number)[]): string {
  return pointer + tokens.map((token) => `/${escapeToken(token)}`).join('');
}

/**
 * Sets an own property, whatever its name: a plain assignment of "__proto__" (a key a document or a
 * caller can use) would replace the object's prototype instead.
 */
export function setOwn(target: object, key: string | number, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The pointer of an internal reference (`#/components/schemas/Item` → `/components/schemas/Item`),
 * or null when the reference is not a JSON Pointer fragment of this document.
 */
export function refToPointer(ref: string): string | null {
  if (ref === '#') return '';
  if (!ref.startsWith('#/')) return null;
  try {
    return decodeURIComponent(ref.slice(1));
  } catch {
    return null;
  }
}

/** The value at `pointer` in `root`, or undefined when a token does not exist. */
export function getAt(root: unknown, pointer: string): unknown {
  if (pointer === '') return root;
  let node: unknown = root;
  for (const raw of pointer.slice(1).split('/')) {
    const token = unescapeToken(raw);
    if (Array.isArray(node)) {
      if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined;
      node = node[Number(token)];
    } else if (isObject(node)) {
      if (!Object.hasOwn(node, token)) return undefined;
      node = node[token];
    } else {
      return undefined;
    }
  }
  return node;
}
