import { apiError, type ErrorBody, type Issue } from '../../shared/errors.ts';
import { userIdSchema } from '../../shared/ids.ts';
import type { Principal } from '../auth/authenticate.ts';
import { canExecute, executeScopeFor } from '../auth/scopes.ts';
import { badHeader, keyLacksScope } from '../errors.ts';
import type { ResolvedTool } from './resolve.ts';

const USER_HEADER = 'X-Service-User-Id';

/** The caller's key may run this app's tools (`tools:execute` or `tools:execute:<appId>`). */
export function checkScope(principal: Principal, resolved: ResolvedTool): ErrorBody | null {
  return canExecute(principal.scopes, resolved.app.appId)
    ? null
    : keyLacksScope(executeScopeFor(resolved.app.appId));
}

/** `parameters` against the tool's schema; `earlierIssues` are problems found before parsing. */
export function checkParameters(
  resolved: ResolvedTool,
  parameters: Record<string, unknown>,
  earlierIssues: readonly Issue[] = [],
): ErrorBody | null {
  const found = resolved.tool.validate(parameters);
  if (found.length === 0 && earlierIssues.length === 0) return null;
  const issues = [...earlierIssues, ...found];
  return apiError('invalid_parameters', 'The parameters do not match the tool.', {
    tool_id: resolved.toolId,
    issues,
  });
}

const PROTO_ISSUES: readonly Issue[] = [
  { path: '/__proto__', message: 'Unknown parameter "__proto__": the tool has no parameter of that name.' },
];
const NO_ISSUES: readonly Issue[] = [];

/**
 * The issues of parameters an adapter's parser dropped before the core saw them: an own
 * `__proto__` (a pollution guard drops it; the contract still reports the unknown name).
 */
export function droppedParameterIssues(protoParameter: boolean): readonly Issue[] {
  return protoParameter ? PROTO_ISSUES : NO_ISSUES;
}

/** The one message for a malformed X-Service-User-Id, on every surface (REST, tRPC, MCP). */
export const BAD_USER_HEADER = `${USER_HEADER} must be 1 to 256 characters, none of them a control character.`;

/** X-Service-User-Id: absent is fine unless the tool needs a user; present must be 1–256 chars. */
export function checkUserHeader(userId: string | undefined, required: boolean): ErrorBody | null {
  if (userId === undefined) {
    return required ? badHeader(`${USER_HEADER} is required: this tool acts for an end user.`) : null;
  }
  return userIdSchema.safeParse(userId).success ? null : badHeader(BAD_USER_HEADER);
}
