/**
 * A tool call → the upstream HTTP request (docs/reference.md "Agent endpoints"). Call it with parameters that passed
 * `validateParameters`; it still never throws on other input and answers with issues instead.
 *
 * Security: the final URL keeps baseUrl's scheme, host and port, and its path starts with baseUrl's
 * path. Values are percent-encoded (so `/`, `?`, `#`, `%`, `\`, `@` in a value stay inside it), a
 * path segment made from a value may not be empty, `.` or `..`, and the built URL is parsed back and
 * compared with what was built, so no normalization by the URL parser can move it.
 */
import type { Issue } from '../../shared/errors.ts';
import { err, ok, type Result } from '../result.ts';
import { writeBody } from './bodies.ts';
import { RESERVED_HEADERS, TOKEN } from './operations.ts';
import { escapeToken, isObject, setOwn } from './pointer.ts';
import {
  encodeStrict,
  serializeCookie,
  serializeHeader,
  serializePath,
  serializeQuery,
} from './serialize.ts';
import type { Tool, ToolParameter } from './types.ts';

export interface UpstreamRequest {
  method: string;
  url: URL;
  /** Lower-case header names. */
  headers: Record<string, string>;
  /** The body in the tool's media type, when the tool has one and the call gave it. */
  body?: string | Buffer;
}

/** The request, or the issues of the parameters that keep it from being sent. */
export type BuildOutcome = Result<UpstreamRequest, Issue[]>;

/** What the service adds to an upstream request on the app's behalf; a caller can never set or see it. */
export interface Credentials {
  headers?: Record<string, string>;
  query?: Record<string, string>;
}

export interface BuildOptions {
  /**
   * Credentials the service adds (an api_key header or query parameter). Applied last: they replace
   * a header of the same name and every query pair of the same name, whatever the caller sent.
   */
  credentials?: Credentials;
}

/** A header value: visible ASCII, spaces and tabs; nothing that could end the field or the head. */
const FIELD_VALUE = /^[\t\x20-\x7e]*$/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function buildUpstreamRequest(
  tool: Tool,
  baseUrl: string,
  parameters: unknown,
  options: BuildOptions = {},
): BuildOutcome {
  const values = isObject(parameters) ? parameters : {};
  const issues: Issue[] = [];
  const problem = (parameter: ToolParameter, message: string) =>
    issues.push({ path: `/${escapeToken(parameter.key)}`, message });

  const base = parseBase(baseUrl);
  if (!base) {
    return err([{ path: '', message: 'The app has no valid base URL.' }]);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    return err([{ path: '', message: 'The app base URL must be http or https.' }]);
  }

  const given = new Map<ToolParameter, unknown>();
  for (const parameter of tool.parameters) {
    const value = Object.hasOwn(values, parameter.key) ? values[parameter.key] : undefined;
    // `null` leaves an optional query, header or cookie parameter out (docs/reference.md "Agent endpoints").
    if (value === undefined || (value === null && parameter.in !== 'path' && !parameter.required)) {
      if (parameter.required) problem(parameter, `Required parameter "${parameter.key}" is missing.`);
      continue;
    }
    if (hasLoneSurrogate(value)) {
      problem(parameter, 'Must be well-formed Unicode text (it holds a lone surrogate).');
      continue;
    }
    given.set(parameter, value);
  }
  if (issues.length > 0) return err(issues);

  const path = expandPath(tool, given, problem);
  const query: string[] = tool.fixedQuery ? [encodeTemplateQuery(tool.fixedQuery)] : [];
  const cookies: string[] = [];
  const headers: Record<string, string> = {};
  for (const [parameter, value] of given) {
    if (parameter.in === 'query') query.push(...serializeQuery(parameter, value));
    if (parameter.in === 'cookie') cookies.push(...serializeCookie(parameter, value));
    if (parameter.in === 'header') {
      const name = parameter.name.toLowerCase();
      const text = serializeHeader(parameter, value);
      if (!TOKEN.test(name) || RESERVED_HEADERS.has(name)) {
        problem(parameter, `Header "${parameter.name}" can't be set by a tool call.`);
      } else if (!FIELD_VALUE.test(text)) {
        problem(parameter, 'Must be printable ASCII text without line breaks or control characters.');
      } else {
        setOwn(headers, name, text);
      }
    }
  }
  let body: string | Buffer | undefined;
  if (tool.body && Object.hasOwn(values, 'body') && values.body !== undefined) {
    const written = writeBody(tool.body, values.body);
    if (!written.ok) issues.push(...written.error);
    else {
      body = written.value.body;
      headers['content-type'] = written.value.contentType;
    }
  }
  if (issues.length > 0 || path === null) return err(issues);

  if (cookies.length > 0) headers.cookie = cookies.join('; ');
  if (tool.accept !== null) headers.accept = tool.accept;

  const credentials = options.credentials;
  if (credentials?.headers) {
    for (const [name, value] of Object.entries(credentials.headers))
      setOwn(headers, name.toLowerCase(), value);
  }
  const pairs = queryPairs(base.search, query, credentials?.query);

  const prefix = base.pathname.replace(/\/+$/, '');
  const fullPath = prefix + path;
  const built = `${base.origin}${fullPath}${pairs.length > 0 ? `?${pairs.join('&')}` : ''}`;
  const url = parseUrl(built);
  const contained =
    url !== null &&
    url.protocol === base.protocol &&
    url.host === base.host &&
    url.username === '' &&
    url.password === '' &&
    url.hash === '' &&
    url.pathname === fullPath &&
    (prefix === '' || url.pathname.startsWith(`${prefix}/`));
  if (!contained) {
    return err([{ path: '', message: "The request would leave the operation's URL." }]);
  }
  return ok({ method: tool.method, url, headers, ...(body !== undefined ? { body } : {}) });
}

/**
 * The query's `name=value` pairs: the base URL's own, then the call's, then the credential's, which
 * replace every pair of the same name. Most calls have none of the three (nothing is built then).
 */
function queryPairs(
  baseSearch: string,
  query: readonly string[],
  credentialQuery: Record<string, string> | undefined,
): string[] {
  if (baseSearch.length <= 1 && query.length === 0 && !credentialQuery) return [];
  const credentialPairs = Object.entries(credentialQuery ?? {});
  const replaced = new Set(credentialPairs.map(([name]) => name));
  const pairs = [...baseSearch.slice(1).split('&'), ...query.flatMap((part) => part.split('&'))].filter(
    (pair) => pair !== '' && !replaced.has(safeDecode(pair.split('=')[0] ?? '')),
  );
  for (const [name, value] of credentialPairs) pairs.push(`${encodeStrict(name)}=${encodeStrict(value)}`);
  return pairs;
}

/**
 * The operation's path with its expressions expanded, or null with problems recorded. A segment
 * holding an expression may not come out empty, `.` or `..`: that would address another resource.
 * A reserved expansion (`allowReserved`, `x-multi-segment`) may add segments; each is checked alike.
 */
function expandPath(
  tool: Tool,
  given: Map<ToolParameter, unknown>,
  problem: (parameter: ToolParameter, message: string) => void,
): string | null {
  let ok = true;
  const segments = pathTemplateOf(tool).map((parts) => {
    const used: ToolParameter[] = [];
    let expanded = '';
    for (const part of parts) {
      if (typeof part === 'string') {
        expanded += part;
        continue;
      }
      if (!part || !given.has(part)) {
        ok = false; // reported as a missing required parameter
        continue;
      }
      used.push(part);
      expanded += serializePath(part, given.get(part));
    }
    if (
      used.length > 0 &&
      (expanded.includes('/') ? expanded.split('/').some(movesPath) : movesPath(expanded))
    ) {
      ok = false;
      for (const parameter of used) {
        problem(
          parameter,
          'Must not make an empty, "." or ".." path segment: it would address another resource.',
        );
      }
    }
    return expanded;
  });
  return ok ? segments.join('/') : null;
}

/** An empty, `.` or `..` segment addresses another resource than the operation's. */
const movesPath = (segment: string) => segment === '' || segment === '.' || segment === '..';

/** A path template segment's parts: literal text (already encoded) or its path parameter (undefined: none). */
type TemplatePart = string | ToolParameter | undefined;

/** Each tool's path template, split and looked up once (the bench showed the per-call split). */
const pathTemplates = new WeakMap<Tool, TemplatePart[][]>();

function pathTemplateOf(tool: Tool): TemplatePart[][] {
  let segments = pathTemplates.get(tool);
  if (!segments) {
    segments = tool.pathTemplate.split('/').map((segment) =>
      segment.split(/(\{[^{}]*\})/).map((part) => {
        const name = /^\{([^{}]*)\}$/.exec(part)?.[1];
        if (name === undefined) return encodeTemplateText(part);
        return tool.parameters.find((p) => p.in === 'path' && p.name === name);
      }),
    );
    pathTemplates.set(tool, segments);
  }
  return segments;
}

/** Parsed base URLs (one per app; only read, never changed), so a call does not parse its app's again. */
const bases = new Map<string, URL | null>();

function parseBase(baseUrl: string): URL | null {
  let base = bases.get(baseUrl);
  if (base === undefined) {
    if (bases.size >= 1_000) bases.clear();
    base = parseUrl(baseUrl);
    bases.set(baseUrl, base);
  }
  return base;
}

/** The query a path key carries, made a valid query: characters a query can't hold raw are encoded. */
function encodeTemplateQuery(text: string): string {
  return text.replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@%/?]/gu, (char) => encodeURIComponent(char));
}

/** The template's own text, made a valid path: characters a path can't hold raw are encoded. */
function encodeTemplateText(text: string): string {
  return text.replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@%]/gu, (char) => encodeURIComponent(char));
}

function parseUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function hasLoneSurrogate(value: unknown): boolean {
  if (typeof value === 'string') return LONE_SURROGATE.test(value);
  if (Array.isArray(value)) return value.some(hasLoneSurrogate);
  if (isObject(value))
    return Object.entries(value).some(([k, v]) => LONE_SURROGATE.test(k) || hasLoneSurrogate(v));
  return false;
}
