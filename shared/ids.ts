import { z } from 'zod';

/** App ids and tool names (docs/reference.md "Calling conventions"). */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
/** `<appId>:::<toolName>` (fixed). */
export const TOOL_ID_SEPARATOR = ':::';
/** Provider label `<vendor>.<product>`, lowercase. */
export const PROVIDER_PATTERN = /^[a-z0-9][a-z0-9-]*\.[a-z0-9][a-z0-9.-]*$/;
/** Idempotency keys: 1–255 printable ASCII characters. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/**
 * Strings the service keeps or sends on (ids, names, user ids, redirect URIs) hold no control
 * character, U+0000–U+001F or U+007F (docs/reference.md "Calling conventions"): PostgreSQL refuses NUL in text, and CR/LF
 * would split a header or a Location later.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
export const NO_CONTROL_CHARACTERS = /^[^\u0000-\u001f\u007f]*$/;
export const NO_CONTROL_CHARACTERS_MESSAGE = 'must not contain control characters';

/** A string without control characters; chain `.min()`, `.max()`, `.trim()` on it. */
export function plainString() {
  return z.string().regex(NO_CONTROL_CHARACTERS, NO_CONTROL_CHARACTERS_MESSAGE);
}

export const appIdSchema = z.string().regex(ID_PATTERN, 'must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$');
export const userIdSchema = plainString().min(1).max(256);

/** Splits a composite tool id; `null` when it is not composite. */
export function splitToolId(toolId: string): { appId: string; toolName: string } | null {
  const at = toolId.indexOf(TOOL_ID_SEPARATOR);
  if (at < 0) return null;
  return { appId: toolId.slice(0, at), toolName: toolId.slice(at + TOOL_ID_SEPARATOR.length) };
}

export function composeToolId(appId: string, toolName: string): string {
  return `${appId}${TOOL_ID_SEPARATOR}${toolName}`;
}
