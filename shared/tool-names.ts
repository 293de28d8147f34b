import { composeToolId } from './ids.ts';

/**
 * Tool-name rules, one place for the server, MCP and the SDK adapters. No Node imports: the MCP
 * name needs SHA-256, which callers pass in as `sha256Hex`, so the SDK can use this file anywhere.
 */

const OUTSIDE = /[^A-Za-z0-9_.-]+/g;
const LEADING = /^[^A-Za-z0-9]+/;
const TOOL_NAME_MAX = 128;

/**
 * A tool's name from an operationId (docs/reference.md "Administration"): each run of characters outside
 * `[A-Za-z0-9_.-]` becomes `_`, leading characters other than letters and digits are removed,
 * the result is cut to 128 characters. `''` when nothing is left.
 *
 * @example toolNameFrom('meta/root') // 'meta_root'
 */
export function toolNameFrom(operationId: string): string {
  return operationId.replace(OUTSIDE, '_').replace(LEADING, '').slice(0, TOOL_NAME_MAX);
}

/**
 * The name of an operation without an operationId: lower-case method and the path's non-empty
 * segments, braces removed, joined by `_`, then {@link toolNameFrom}.
 *
 * @example toolNameFromPath('get', '/v1/items/{id}') // 'get_v1_items_id'
 */
export function toolNameFromPath(method: string, path: string): string {
  const segments = path
    .split('/')
    .map((s) => s.replace(/[{}]/g, ''))
    .filter((s) => s.length > 0);
  return toolNameFrom([method.toLowerCase(), ...segments].join('_'));
}

/**
 * `base`, or, when an earlier tool of the same app took it, `base_2`, `base_3`, … (cut so the
 * suffix fits in 128 characters); the name is added to `taken`.
 *
 * @example uniqueToolName('list', new Set(['list'])) // 'list_2'
 */
export function uniqueToolName(base: string, taken: Set<string>): string {
  let name = base;
  for (let n = 2; taken.has(name); n += 1) {
    const suffix = `_${n}`;
    name = base.slice(0, TOOL_NAME_MAX - suffix.length) + suffix;
  }
  taken.add(name);
  return name;
}

/** Separator of an MCP / framework tool name: `<appId>__<toolName>` (docs/reference.md "MCP"). */
export const MODEL_TOOL_SEPARATOR = '__';
/** Function names accepted by OpenAI, Anthropic and MCP clients alike. */
export const MODEL_TOOL_NAME_MAX = 64;
/** How many characters of a name its hashed form keeps. */
export const HASHED_PREFIX = 55;

/**
 * The name a model sees for `<appId>:::<toolName>` (MCP `tools/list`, SDK adapters):
 * `<appId>__<toolName>` when at most 64 characters; otherwise its first 55 characters, `_`, and the
 * first 8 hex digits of the SHA-256 of the composite id. Stable across servers and restarts.
 *
 * @param sha256Hex the hex SHA-256 of a UTF-8 string (node:crypto in the server, Web Crypto elsewhere)
 */
export function modelToolName(appId: string, toolName: string, sha256Hex: (text: string) => string): string {
  const plain = `${appId}${MODEL_TOOL_SEPARATOR}${toolName}`;
  if (plain.length <= MODEL_TOOL_NAME_MAX) return plain;
  return hashedToolName(plain, composeToolId(appId, toolName), sha256Hex);
}

/**
 * The hashed form of a name: its first 55 characters, `_`, and the first 8 hex digits of the
 * SHA-256 of the composite id — a long name's own, or (MCP) that of a plain name two tools share.
 */
export function hashedToolName(name: string, toolId: string, sha256Hex: (text: string) => string): string {
  return `${name.slice(0, HASHED_PREFIX)}_${sha256Hex(toolId).slice(0, 8)}`;
}

/** Function names OpenAI and Anthropic accept (`.` is not among them, though ids may hold it). */
export const FUNCTION_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The name of a tool in a provider's function calling (the SDK adapters): {@link modelToolName}
 * whenever OpenAI and Anthropic accept it, so a model sees the MCP name; for an id holding `.`,
 * each `.` becomes `_`, then its first 55 characters, `_`, and the first 8 hex digits of the
 * SHA-256 of the composite id (the hash keeps `a.b` and `a_b` apart).
 *
 * @example functionToolName('google.calendar', 'events_list', sha256Hex) // 'google_calendar__events_list_<8 hex>'
 */
export function functionToolName(
  appId: string,
  toolName: string,
  sha256Hex: (text: string) => string,
): string {
  const name = modelToolName(appId, toolName, sha256Hex);
  if (FUNCTION_NAME_PATTERN.test(name)) return name;
  const safe = `${appId}${MODEL_TOOL_SEPARATOR}${toolName}`.replace(/[^A-Za-z0-9_-]/g, '_');
  return hashedToolName(safe, composeToolId(appId, toolName), sha256Hex);
}
