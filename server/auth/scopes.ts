import { ID_PATTERN } from '../../shared/ids.ts';

/** API-key scopes (docs/reference.md "Administration"): the one place they are spelled. */
export const SCOPE = {
  toolsExecute: 'tools:execute',
  oauthInitiate: 'oauth:initiate',
  connectionsRead: 'connections:read',
  connectionsWrite: 'connections:write',
  admin: 'admin',
} as const;

const APP_EXECUTE_PREFIX = `${SCOPE.toolsExecute}:`;

/** The narrowest scope that allows executing one app's tools. */
export function executeScopeFor(appId: string): string {
  return `${APP_EXECUTE_PREFIX}${appId}`;
}

/** Every scope an API key can hold, as a person writes them (the per-app form with its placeholder). */
export const SCOPE_FORMS: readonly string[] = [
  SCOPE.toolsExecute,
  `${APP_EXECUTE_PREFIX}<appId>`,
  ...Object.values(SCOPE).filter((scope) => scope !== SCOPE.toolsExecute),
];

export function isKnownScope(scope: string): boolean {
  if ((Object.values(SCOPE) as string[]).includes(scope)) return true;
  return scope.startsWith(APP_EXECUTE_PREFIX) && ID_PATTERN.test(scope.slice(APP_EXECUTE_PREFIX.length));
}

export function hasScope(scopes: readonly string[], scope: string): boolean {
  return scopes.includes(scope);
}

/** `tools:execute` covers every app; `tools:execute:<appId>` one app. */
export function canExecute(scopes: readonly string[], appId: string): boolean {
  return scopes.includes(SCOPE.toolsExecute) || scopes.includes(executeScopeFor(appId));
}
