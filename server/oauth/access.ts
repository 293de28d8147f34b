import { apiError, type ErrorBody } from '../../shared/errors.ts';
import { unreachableCause, unreachableMessage } from '../calls/unreachable.ts';
import type { AppDeps } from '../deps.ts';
import { err, ok, type Result } from '../result.ts';
import { expiresSoon, findGrant, type GrantKey, openTokens } from './grants.ts';
import type { OAuthApp } from './provider.ts';
import { type RefreshOutcome, refreshGrant } from './refresh.ts';
import { type RefreshReason, tracedRefresh } from './refresh-span.ts';

/**
 * Token freshness for one call: the user's usable access token, refreshed first when it expires
 * soon, and refreshed once more when the upstream refuses it. Every failure is a contract body.
 */

/** A usable access token, and whether this call already refreshed it (then a 401 is not retried). */
export type UserAccess = Result<{ accessToken: string; refreshed: boolean }, ErrorBody>;

/**
 * Every secret of the grant this call touched (tokens, the app's client secret), so that the
 * caller can keep them out of what it relays (docs/reference.md "Agent endpoints").
 */
export type SeenSecrets = Set<string>;

export function authRequired(appId: string, reauth = false): ErrorBody<'auth_required'> {
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
    const denied = missingScope(needed, outcome.value.scopes);
    return denied ? err(denied) : ok({ accessToken: outcome.value.accessToken, refreshed: true });
  }
  const failure = outcome.error;
  switch (failure.kind) {
    case 'auth_required':
      return err(authRequired(appId));
    case 'reauth_required':
      return err(authRequired(appId, true));
    case 'upstream_error':
      return err(
        apiError('upstream_error', `The token endpoint answered ${failure.status} to a refresh.`, {
          upstream_status: failure.status,
          upstream_body: failure.body,
        }),
      );
    case 'upstream_unreachable': {
      const cause = unreachableCause(failure.cause);
      return err(apiError('upstream_unreachable', unreachableMessage('The token endpoint', cause)));
    }
    case 'upstream_timeout':
      return err(apiError('upstream_timeout', 'The token endpoint did not answer in time.'));
  }
}

/**
 * The app's client secret, which a refresh sends. The token endpoint's own answer is already
 * redacted of everything its request carried (callProvider); this keeps the secret out of the API's
 * answers too, should the provider's API ever echo it.
 */
async function noteClientSecret(app: OAuthApp, seen: SeenSecrets): Promise<void> {
  const secret = await app.secret();
  if (secret) seen.add(secret);
}

async function refreshed(
  deps: AppDeps,
  app: OAuthApp,
  key: GrantKey,
  seenToken: string,
  needed: readonly string[],
  seen: SeenSecrets,
  reason: RefreshReason,
): Promise<UserAccess> {
  await noteClientSecret(app, seen);
  const outcome = await tracedRefresh(deps.tracing?.tracer, app, key, reason, () =>
    refreshGrant(deps, app, key, seenToken),
  );
  const access = fromRefresh(outcome, app.appId, needed);
  if (access.ok) seen.add(access.value.accessToken);
  return access;
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
  seen: SeenSecrets = new Set(),
): Promise<UserAccess> {
  // Warm: no query, no envelope (grant-cache.ts).
  const grant = await deps.grants.get(
    key,
    app.updatedAt.getTime(),
    deps.clock.now(),
    () => findGrant(deps.db.prisma, key),
    (row) => openTokens(deps.envelope, key, row.credential),
  );
  if (!grant) return err(authRequired(app.appId));
  const { row, tokens } = grant;
  if (row.status !== 'active' || !tokens) return err(authRequired(app.appId, true));
  const denied = missingScope(neededScopes, row.scopes);
  if (denied) return err(denied);
  seen.add(tokens.access_token);
  if (tokens.refresh_token) seen.add(tokens.refresh_token);
  if (!expiresSoon(row.expiresAt, deps.clock.now())) {
    return ok({ accessToken: tokens.access_token, refreshed: false });
  }
  return refreshed(deps, app, key, tokens.access_token, neededScopes, seen, 'expiring');
}

/** The upstream refused `rejected`, a token we believed valid: refresh once (the caller retries once). */
export function refreshRejected(
  deps: AppDeps,
  app: OAuthApp,
  key: GrantKey,
  rejected: string,
  neededScopes: readonly string[],
  seen: SeenSecrets = new Set(),
): Promise<UserAccess> {
  return refreshed(deps, app, key, rejected, neededScopes, seen, 'rejected');
}
