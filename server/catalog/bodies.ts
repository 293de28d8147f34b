/**
 * A call's `body` written in the tool's media type (docs/reference.md "Administration"): JSON as JSON text; a form from
 * an object (scalars `name=value`, arrays of scalars repeated, nested objects and arrays of objects
 * in bracket notation: `metadata[plan]=pro`, `items[0][price]=p1`; `encoding` style `deepObject` on
 * an array sends `name[]=value`); multipart from an object (scalars as text parts, files from
 * `{ base64, filename?, content_type? }`); `text/plain` as the string; anything else from
 * `{ base64, content_type? }`. Names and values are percent-encoded except the brackets the
 * notation adds, as Stripe's own clients send them.
 */
import { randomBytes } from 'node:crypto';
import type { Issue } from '../../shared/errors.ts';
import { err, ok, type Result } from '../result.ts';
import { isObject } from './pointer.ts';
import { encodeStrict } from './serialize.ts';
import type { PropertyEncoding, ToolBody } from './types.ts';

/** A body in the tool's media type, or the issues of the value given for it. */
export type WrittenBody = Result<{ body: string | Buffer; contentType: string }, Issue[]>;

const HEADER_VALUE = /^[\x20-\x7e]+$/;

export function writeBody(body: ToolBody, value: unknown): WrittenBody {
  switch (body.kind) {
    case 'json':
      // JSON.stringify escapes lone surrogates, so any JSON value makes a valid body.
      return ok({ body: JSON.stringify(value), contentType: body.contentType });
    case 'form':
      if (typeof value === 'string') return ok({ body: value, contentType: body.contentType });
      if (!isObject(value)) return fail('/body', 'Must be an object: it is sent as a form.');
      return ok({ body: formPairs(value, body.encoding ?? {}).join('&'), contentType: body.contentType });
    case 'multipart':
      if (!isObject(value)) return fail('/body', 'Must be an object: it is sent as multipart/form-data.');
      return multipart(value, body);
    case 'text':
      if (typeof value !== 'string') return fail('/body', 'Must be a string.');
      return ok({ body: value, contentType: body.contentType });
    case 'binary': {
      if (!isObject(value) || typeof value.base64 !== 'string')
        return fail('/body/base64', 'Must be base64 text.');
      const type = typeof value.content_type === 'string' ? value.content_type : concrete(body.contentType);
      if (!HEADER_VALUE.test(type))
        return fail('/body/content_type', 'Must be a media type in printable ASCII.');
      return ok({ body: Buffer.from(value.base64, 'base64'), contentType: type });
    }
  }
}

function fail(path: string, message: string): WrittenBody {
  return err([{ path, message }]);
}

/** A declared type usable as Content-Type: wildcards (`image/*`, `*\/*`) say nothing concrete. */
function concrete(type: string): string {
  return type.includes('*') ? 'application/octet-stream' : type;
}

function scalarText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

const isScalar = (value: unknown) => value === null || typeof value !== 'object';

/** The `name=value` pairs of a form body. */
export function formPairs(
  value: Record<string, unknown>,
  encoding: Record<string, PropertyEncoding>,
): string[] {
  const pairs: string[] = [];
  for (const [name, item] of Object.entries(value)) {
    if (item === undefined) continue;
    const key = encodeStrict(name);
    const style = encoding[name]?.style;
    if (Array.isArray(item) && item.every(isScalar)) {
      if (style === 'deepObject') {
        for (const element of item) pairs.push(`${key}[]=${encodeStrict(scalarText(element))}`);
      } else if (encoding[name]?.explode === false) {
        const delimiter = style === 'spaceDelimited' ? '%20' : style === 'pipeDelimited' ? '|' : ',';
        if (item.length > 0)
          pairs.push(`${key}=${item.map((e) => encodeStrict(scalarText(e))).join(delimiter)}`);
      } else {
        for (const element of item) pairs.push(`${key}=${encodeStrict(scalarText(element))}`);
      }
    } else {
      brackets(key, item, pairs);
    }
  }
  return pairs;
}

/** `prefix[key]=value` for objects, `prefix[0]...` for arrays, recursively. */
function brackets(prefix: string, value: unknown, pairs: string[]): void {
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) brackets(`${prefix}[${index}]`, item, pairs);
  } else if (isObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      if (item !== undefined) brackets(`${prefix}[${encodeStrict(key)}]`, item, pairs);
    }
  } else {
    pairs.push(`${prefix}=${encodeStrict(scalarText(value))}`);
  }
}

/** A multipart/form-data body (RFC 7578) with a random boundary. */
function multipart(value: Record<string, unknown>, body: ToolBody): WrittenBody {
  const boundary = `toolgate-${randomBytes(16).toString('hex')}`;
  const files = new Set(body.files ?? []);
  const parts: Buffer[] = [];
  const issues: Issue[] = [];
  const part = (
    name: string,
    content: Buffer | string,
    extra: { filename?: string; contentType?: string } = {},
  ) => {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${quote(name)}"`;
    if (extra.filename !== undefined) head += `; filename="${quote(extra.filename)}"`;
    head += '\r\n';
    if (extra.contentType !== undefined) head += `Content-Type: ${extra.contentType}\r\n`;
    parts.push(
      Buffer.from(`${head}\r\n`, 'utf8'),
      typeof content === 'string' ? Buffer.from(content, 'utf8') : content,
      Buffer.from('\r\n'),
    );
  };
  const filePart = (name: string, file: unknown, pointer: string) => {
    if (!isObject(file) || typeof file.base64 !== 'string') {
      issues.push({ path: `${pointer}/base64`, message: 'Must be base64 text.' });
      return;
    }
    const declared = body.encoding?.[name]?.contentType;
    const type =
      typeof file.content_type === 'string'
        ? file.content_type
        : declared && !declared.includes(',')
          ? concrete(declared)
          : 'application/octet-stream';
    if (!HEADER_VALUE.test(type)) {
      issues.push({ path: `${pointer}/content_type`, message: 'Must be a media type in printable ASCII.' });
      return;
    }
    const filename = typeof file.filename === 'string' ? file.filename : name;
    part(name, Buffer.from(file.base64, 'base64'), { filename, contentType: type });
  };
  for (const [name, item] of Object.entries(value)) {
    if (item === undefined) continue;
    const pointer = `/body/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    if (files.has(name)) {
      if (Array.isArray(item)) {
        for (const [index, file] of item.entries()) filePart(name, file, `${pointer}/${index}`);
      } else {
        filePart(name, item, pointer);
      }
    } else if (Array.isArray(item) && item.every(isScalar)) {
      for (const element of item) part(name, scalarText(element));
    } else if (isScalar(item)) {
      part(name, scalarText(item));
    } else {
      part(name, JSON.stringify(item), { contentType: 'application/json' });
    }
  }
  if (issues.length > 0) return err(issues);
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return ok({ body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` });
}

/** A name or file name inside a quoted Content-Disposition parameter (as browsers write it). */
function quote(text: string): string {
  return text.replaceAll('\r', '%0D').replaceAll('\n', '%0A').replaceAll('"', '%22');
}
