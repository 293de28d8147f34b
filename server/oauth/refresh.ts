import * as oidc from 'openid-client';
import type { PrismaClient } from '../db/generated/client.ts';
import type { AppDeps } from '../deps.ts';
import {
  expiresSoon,
  expiryFrom,
  findGrant,
  type GrantKey,
  lockGrant,
  markReauthRequired,
  openTokens,
  saveRefreshedTokens,
} from './grants.ts';
import { callProvider, type OAuthApp, parseScope } from './provider.ts';

export type RefreshOutcome =
  | { ok: true; accessToken: string; scopes: string[] }
  /** The grant is gone (deleted meanwhile). */
  | { ok: false; error: 'auth_required' }
  /** The grant can't be refreshed any more; it is marked so. */
  | { ok: false; error: 'reauth_required' }
  /** The token endpoint answered something other than tokens (status and body are its own). */
  | { ok: false; error: 'upstream_error'; status: number; body: string }
  | { ok: false; error: 'upstream_unreachable' | 'upstream_timeout' };

/** RFC 6749 §5.2 codes that say the grant (or our client) is no good: only a new authorization helps. */
const REAUTH_ERRORS = new Set(['invalid_grant', 'invalid_client', 'unauthorized_client']);

/** In-flight refreshes per server (keyed by its Prisma client, so two servers in one process stay apart). */
const flights = new WeakMap<PrismaClient, Map<string, Promise<RefreshOutcome>>>();

/**
 * Refreshes a grant whose access token `seen` is about to expire or was refused by the upstream,
 * so that concurrent callers cause ONE request to the provider and all share its result:
 * - in this process, callers of the same grant join one promise;
 * - across processes, the refresh runs in a transaction holding the grant's row lock
 *   (`SELECT … FOR UPDATE`); whoever waited on the lock re-reads the grant and uses the token the
 *   winner stored instead of spending the (possibly rotated, now invalid) refresh token again.
 * The lock does not cover the provider's own view: a refresh token used elsewhere (another
 * deployment holding a copy) still fails with invalid_grant, and the grant then needs re-auth.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-6
 */
export function refreshGrant(
  deps: AppDeps,
  app: OAuthApp,
  key: GrantKey,
  seen: string,
): Promise<RefreshOutcome> {
  const inflight = flights.get(deps.db.prisma) ?? new Map<string, Promise<RefreshOutcome>>();
  flights.set(deps.db.prisma, inflight);
  const id = JSON.stringify([key.clientId, key.userId, key.appId]);
  const running = inflight.get(id);
  if (running) return running;
  const promise = lockedRefresh(deps, app, key, seen).finally(() => inflight.delete(id));
  inflight.set(id, promise);
  return promise;
}

async function lockedRefresh(
  deps: AppDeps,
  app: OAuthApp,
  key: GrantKey,
  seen: string,
): Promise<RefreshOutcome> {
  const budgetMs = deps.config.upstreamTimeoutMs;
  return deps.db.prisma.$transaction(
    async (tx): Promise<RefreshOutcome> => {
      // Everything inside uses `tx` only: on PGlite the transaction holds the one connection.
      await lockGrant(tx, key);
      const row = await findGrant(tx, key);
      if (!row) return { ok: false, error: 'auth_required' };
      if (row.status !== 'active') return { ok: false, error: 'reauth_required' };
      const tokens = await openTokens(deps.envelope, key, row.credential);
      const now = deps.clock.now();
      // Someone refreshed while we waited for the lock: use theirs.
      if (tokens.access_token !== seen && !expiresSoon(row.expiresAt, now)) {
        return { ok: true, accessToken: tokens.access_token, scopes: row.scopes };
      }
      const refreshToken = tokens.refresh_token;
      if (!refreshToken) {
        await markReauthRequired(tx, row.id, new Date(now));
        return { ok: false, error: 'reauth_required' };
      }

      const answer = await callProvider(app, budgetMs, (config) =>
        oidc.refreshTokenGrant(config, refreshToken),
      );
      if (!answer.ok) {
        const { failure } = answer;
        deps.logger.warn(
          {
            appId: key.appId,
            clientId: key.clientId,
            failure: failure.kind,
            ...(failure.kind === 'oauth_error' ? { oauthError: failure.error } : {}),
            ...('status' in failure ? { status: failure.status } : {}),
          },
          'oauth refresh failed',
        );
        switch (failure.kind) {
          case 'oauth_error':
            if (REAUTH_ERRORS.has(failure.error)) {
              await markReauthRequired(tx, row.id, new Date(deps.clock.now()));
              return { ok: false, error: 'reauth_required' };
            }
            return { ok: false, error: 'upstream_error', status: failure.status, body: failure.body };
          case 'http_error':
            return { ok: false, error: 'upstream_error', status: failure.status, body: failure.body };
          case 'unreachable':
            return { ok: false, error: 'upstream_unreachable' };
          case 'timeout':
            return { ok: false, error: 'upstream_timeout' };
        }
      }

      const fresh = answer.value;
      const receivedAt = deps.clock.now();
      const scopes = fresh.scope === undefined ? row.scopes : parseScope(fresh.scope, []);
      await saveRefreshedTokens(
        tx,
        deps.envelope,
        key,
        row.id,
        {
          // No refresh token in the answer: the old one stays valid (RFC 6749 §6).
          tokens: { access_token: fresh.access_token, refresh_token: fresh.refresh_token ?? refreshToken },
          scopes,
          expiresAt: expiryFrom(fresh.expires_in, receivedAt),
        },
        new Date(receivedAt),
      );
      return { ok: true, accessToken: fresh.access_token, scopes };
    },
    // The provider call runs inside; waiting for another process's refresh counts too.
    { maxWait: budgetMs + 5_000, timeout: 2 * budgetMs + 10_000 },
  );
}
