/**
 * OpenAPI parameter serialization (`style`/`explode`, OpenAPI 3.x "Style Values"), producing text
 * that is already percent-encoded. Only the delimiters a style adds are left raw; every character of
 * a value or an object key outside RFC 3986's unreserved set is encoded, so no value can add a path
 * segment, a query parameter or a fragment.
 */
import { isObject } from './pointer.ts';
import type { ToolParameter } from './types.ts';

/** Percent-encodes all but RFC 3986 unreserved characters. The text must be well-formed Unicode. */
export function encodeStrict(text: string): string {
  return encodeURIComponent(text).replace(
    /[!'()*]/g,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/**
 * `allowReserved` query values: RFC 3986 reserved characters stay raw, except the ones that would
 * end the value (`&`, `=`, `#`), which stay encoded so a value can never add a query parameter.
 */
function encodeReserved(text: string): string {
  return encodeStrict(text).replace(/%(3A|2F|3F|5B|5D|40|21|24|27|28|29|2A|2B|2C|3B)/g, (sequence) =>
    decodeURIComponent(sequence),
  );
}

/** Text of a primitive; nested structures (undefined by the styles) as JSON. */
function text(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

type Shape =
  | { kind: 'primitive'; value: string }
  | { kind: 'array'; items: string[] }
  | { kind: 'object'; entries: [string, string][] };

function shape(value: unknown): Shape {
  if (Array.isArray(value)) return { kind: 'array', items: value.map(text) };
  if (isObject(value))
    return { kind: 'object', entries: Object.entries(value).map(([k, v]) => [k, text(v)]) };
  return { kind: 'primitive', value: text(value) };
}

/** The value as one string in the parameter's media type (parameters described by `content`). */
function contentText(parameter: ToolParameter, value: unknown): string {
  const type = (parameter.contentType ?? '').toLowerCase();
  if (typeof value === 'string' && !/json/.test(type)) return value;
  return JSON.stringify(value) ?? '';
}

/** A path parameter's text for its `{name}` expression (simple, label or matrix). */
export function serializePath(parameter: ToolParameter, value: unknown): string {
  const enc = encodeStrict;
  const { name, explode } = parameter;
  if (parameter.contentType !== undefined) return enc(contentText(parameter, value));
  const s = shape(value);
  if (parameter.allowReserved && s.kind === 'primitive' && parameter.style === 'simple') {
    // `allowReserved` / `x-multi-segment`: `/` separates segments, each one still encoded.
    return s.value.split('/').map(enc).join('/');
  }
  if (s.kind !== 'primitive' && (s.kind === 'array' ? s.items.length : s.entries.length) === 0) return '';
  switch (parameter.style) {
    case 'label': {
      if (s.kind === 'primitive') return `.${enc(s.value)}`;
      if (s.kind === 'array') return `.${s.items.map(enc).join(explode ? '.' : ',')}`;
      return `.${pairs(s.entries, enc, explode ? '=' : ',').join(explode ? '.' : ',')}`;
    }
    case 'matrix': {
      const key = enc(name);
      if (s.kind === 'primitive') return s.value === '' ? `;${key}` : `;${key}=${enc(s.value)}`;
      if (s.kind === 'array') {
        return explode
          ? s.items.map((item) => `;${key}=${enc(item)}`).join('')
          : `;${key}=${s.items.map(enc).join(',')}`;
      }
      return explode
        ? pairs(s.entries, enc, '=')
            .map((pair) => `;${pair}`)
            .join('')
        : `;${key}=${pairs(s.entries, enc, ',').join(',')}`;
    }
    default: {
      if (s.kind === 'primitive') return enc(s.value);
      if (s.kind === 'array') return s.items.map(enc).join(',');
      return pairs(s.entries, enc, explode ? '=' : ',').join(',');
    }
  }
}

/** A query parameter's `name=value` pairs (form, spaceDelimited, pipeDelimited, deepObject). */
export function serializeQuery(parameter: ToolParameter, value: unknown): string[] {
  const enc = parameter.allowReserved ? encodeReserved : encodeStrict;
  const key = encodeStrict(parameter.name);
  if (parameter.contentType !== undefined) return [`${key}=${enc(contentText(parameter, value))}`];
  if (parameter.style === 'deepObject' && isObject(value)) return deepObject(key, value, enc);
  if (parameter.style === 'deepObject' && Array.isArray(value))
    return value.map((item) => `${key}[]=${enc(text(item))}`);
  const s = shape(value);
  if (s.kind === 'primitive') return [`${key}=${enc(s.value)}`];
  const delimiter = { spaceDelimited: '%20', pipeDelimited: '|' }[parameter.style as string] ?? ',';
  if (s.kind === 'array') {
    if (s.items.length === 0) return [];
    return parameter.explode
      ? s.items.map((item) => `${key}=${enc(item)}`)
      : [`${key}=${s.items.map(enc).join(delimiter)}`];
  }
  if (s.entries.length === 0) return [];
  return parameter.explode
    ? s.entries.map(([k, v]) => `${encodeStrict(k)}=${enc(v)}`)
    : [`${key}=${s.entries.flatMap(([k, v]) => [encodeStrict(k), enc(v)]).join(delimiter)}`];
}

/** `color[R]=100&color[G]=200`; nested objects nest brackets, arrays repeat the key. */
function deepObject(prefix: string, value: Record<string, unknown>, enc: (text: string) => string): string[] {
  return Object.entries(value).flatMap(([k, v]) => {
    const key = `${prefix}[${encodeStrict(k)}]`;
    if (isObject(v)) return deepObject(key, v, enc);
    if (Array.isArray(v)) return v.map((item) => `${key}=${enc(text(item))}`);
    return [`${key}=${enc(text(v))}`];
  });
}

/** A header parameter's value (style simple). Not encoded: the caller checks it is a valid field value. */
export function serializeHeader(parameter: ToolParameter, value: unknown): string {
  if (parameter.contentType !== undefined) return contentText(parameter, value);
  const s = shape(value);
  if (s.kind === 'primitive') return s.value;
  if (s.kind === 'array') return s.items.join(',');
  return s.entries.map(([k, v]) => (parameter.explode ? `${k}=${v}` : `${k},${v}`)).join(',');
}

/** A cookie parameter's `name=value` pairs (style form); values percent-encoded. */
export function serializeCookie(parameter: ToolParameter, value: unknown): string[] {
  const enc = encodeStrict;
  const name = parameter.name;
  if (parameter.contentType !== undefined) return [`${name}=${enc(contentText(parameter, value))}`];
  const s = shape(value);
  if (s.kind === 'primitive') return [`${name}=${enc(s.value)}`];
  if (s.kind === 'array') {
    if (s.items.length === 0) return [];
    return parameter.explode
      ? s.items.map((item) => `${name}=${enc(item)}`)
      : [`${name}=${s.items.map(enc).join(',')}`];
  }
  if (s.entries.length === 0) return [];
  return parameter.explode
    ? s.entries.map(([k, v]) => `${enc(k)}=${enc(v)}`)
    : [`${name}=${s.entries.flatMap(([k, v]) => [enc(k), enc(v)]).join(',')}`];
}

function pairs(entries: [string, string][], enc: (text: string) => string, join: string): string[] {
  return entries.map(([k, v]) => `${enc(k)}${join}${enc(v)}`);
}
