import { apiError, type ErrorBody } from '../../shared/errors.ts';
import type { AppDeps } from '../deps.ts';
import { expiresSoon, findGrant, type GrantKey, openTokens } from '../oauth/grants.ts';
import type { OAuthApp } from '../oauth/provider.ts';
import { type RefreshOutcome, refreshGrant } from '../oauth/refresh.ts';

/** A usable access token, and whether this call already refreshed it (then a 401 is not retried). */
export type UserAccess =
  | { ok: true; accessToken: string; refreshed: boolean }
  | { ok: false; body: ErrorBody };

export function authRequired(appId: string, reauth = false): ErrorBody {
  return reauth
    ? apiError(
        'auth_required',
        'The stored authorization can no longer be refreshed; the user must authorize again.',
        {
          auth_endpoint: '/initiateOAuth',
          app_id: appId,
          reauth_required: true,
        },
      )
    : apiError('auth_required', 'This tool needs the user to authorize the app first.', {
        auth_endpoint: '/initiateOAuth',
        app_id: appId,
      });
}

/** 403 when the grant lacks a provider scope the tool's operation declares (the first such scope). */
function missingScope(needed: readonly string[], granted: readonly string[]): ErrorBody | null {
  const scope = needed.find((s) => !granted.includes(s));
  if (scope === undefined) return null;
  return apiError('rbac_denied', `The user's authorization lacks the scope ${scope} this tool needs.`, {
    reason: 'scope_missing',
    scope,
  });
}

function fromRefresh(outcome: RefreshOutcome, appId: string, needed: readonly string[]): UserAccess {
  if (outcome.ok) {
    const denied = missingScope(needed, outcome.scopes);
    return denied
      ? { ok: false, body: denied }
      : { ok: true, accessToken: outcome.accessToken, refreshed: true };
  }
  switch (outcome.error) {
    case 'auth_required':
      return { ok: false, body: authRequired(appId) };
    case 'reauth_required':
      return { ok: false, body: authRequired(appId, true) };
    case 'upstream_error':
      return {
        ok: false,
        body: apiError('upstream_error', `The token endpoint answered ${outcome.status} to a refresh.`, {
          upstream_status: outcome.status,
          upstream_body: outcome.body,
        }),
      };
    case 'upstream_unreachable':
      return {
        ok: false,
        body: apiError('upstream_unreachable', 'The token endpoint could not be reached.'),
      };
    case 'upstream_timeout':
      return { ok: false, body: apiError('upstream_timeout', 'The token endpoint did not answer in time.') };
  }
}

/**
 * The user's access token for a tool of an oauth2 app. Grants are per (client, user, app) and never
 * cross clients or users. No grant → 401 auth_required; a grant marked reauth_required → 401 with
 * `reauth_required: true`; a grant without a scope the tool declares → 403; a token expiring
 * within LIMITS.refreshSkewMs is refreshed first (one refresh per grant, see refresh.ts).
 */
export async function userAccess(
  deps: AppDeps,
  app: OAuthApp,
  key: GrantKey,
  neededScopes: readonly string[],
): Promise<UserAccess> {
  const row = await findGrant(deps.db.prisma, key);
  if (!row) return { ok: false, body: authRequired(app.appId) };
  if (row.status !== 'active') return { ok: false, body: authRequired(app.appId, true) };
  const denied = missingScope(neededScopes, row.scopes);
  if (denied) return { ok: false, body: denied };
  const tokens = await openTokens(deps.envelope, key, row.credential);
  if (!expiresSoon(row.expiresAt, deps.clock.now())) {
    return { ok: true, accessToken: tokens.access_token, refreshed: false };
  }
  return fromRefresh(await refreshGrant(deps, app, key, tokens.access_token), app.appId, neededScopes);
}

/** The upstream refused `rejected`, a token we believed valid: refresh once (the caller retries once). */
export async function refreshRejected(
  deps: AppDeps,
  app: OAuthApp,
  key: GrantKey,
  rejected: string,
  neededScopes: readonly string[],
): Promise<UserAccess> {
  return fromRefresh(await refreshGrant(deps, app, key, rejected), app.appId, neededScopes);
}
