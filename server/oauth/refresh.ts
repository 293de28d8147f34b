import * as oidc from 'openid-client';
import { LIMITS } from '../config.ts';
import type { AppDeps } from '../deps.ts';
import { err, ok } from '../result.ts';
import {
  auditConnection,
  expiresSoon,
  expiryFrom,
  findGrant,
  type GrantKey,
  lockGrant,
  markReauthRequired,
  type NewTokens,
  openTokens,
  saveRefreshedTokens,
  saveRefreshedTokensIf,
} from './grants.ts';
import { callProvider, type OAuthApp, parseScope, resourceParameters } from './provider.ts';
import type { RefreshOutcome } from './refresh-flights.ts';

export type { RefreshOutcome } from './refresh-flights.ts';

/** RFC 6749 §5.2 codes that say the grant (or our client) is no good: only a new authorization helps. */
const REAUTH_ERRORS = new Set(['invalid_grant', 'invalid_client', 'unauthorized_client']);

/**
 * Refreshes a grant whose access token `seen` is about to expire or was refused by the upstream,
 * so that concurrent callers cause ONE request to the provider and all share its result:
 * - in this process, callers of the same grant join one run (`deps.refreshes`);
 * - across processes, the refresh runs in a transaction holding the grant's row lock
 *   (`SELECT … FOR UPDATE`); whoever waited on the lock re-reads the grant and uses the token the
 *   winner stored instead of spending the (possibly rotated, now invalid) refresh token again.
 * The lock does not cover the provider's own view: a refresh token used elsewhere (another
 * deployment holding a copy) still fails with invalid_grant, and the grant then needs re-auth.
 *
 * Once sent, a refresh runs to its end detached from the call that started it (`waitAtMost`): the
 * call answers 504 after its own time-out, the refresh waits for the provider up to
 * LIMITS.refreshTimeoutMs and stores what it gets, and a closing server lets it finish first.
 *
 * Once the provider has answered, its answer is not lost to a database fault: if the lock's
 * connection dies before the save commits, the answer is saved again on a fresh connection,
 * conditional on the grant still holding the credential we read (a version: every seal is
 * unique), so nothing written meanwhile is overwritten.
 *
 * What this cannot cover: a process killed (kill -9, power loss) between the provider's answer and
 * the save. The provider has then rotated the refresh token and the only copy of the new one died
 * with the process; the next refresh spends the old token, gets invalid_grant, and the grant is
 * marked reauth_required. Likewise, if another process takes the released lock in the instant
 * between the dead connection and the fresh save, it may spend the old token first. Only a lease
 * written before the provider call could close these windows, and no lease survives a lost answer.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-6
 */
export function refreshGrant(
  deps: AppDeps,
  app: OAuthApp,
  key: GrantKey,
  seen: string,
): Promise<RefreshOutcome> {
  const id = JSON.stringify([key.clientId, key.userId, key.appId]);
  const flight = deps.refreshes.run(id, () => refreshSurvivingFaults(deps, app, key, seen));
  return waitAtMost(flight, deps.config.upstreamTimeoutMs, (error) =>
    deps.logger.error({ err: error, appId: key.appId, clientId: key.clientId }, 'oauth refresh failed late'),
  );
}

/** What a call answers when the refresh it waits for outlives its time-out (the refresh goes on). */
const STILL_RUNNING: RefreshOutcome = err({ kind: 'upstream_timeout' });

/**
 * A refresh, once sent, runs to its end (docs/reference.md "End-user OAuth"): the provider may have
 * rotated the refresh token already, and its answer is the only copy of the new one. So a call
 * waits for the refresh at most its own time-out and then answers 504, while the refresh goes on
 * under its own bound (LIMITS.refreshTimeoutMs) and stores what it gets. Calls that come meanwhile
 * join it (single flight here, the row lock on other servers) and use its answer.
 */
function waitAtMost(
  flight: Promise<RefreshOutcome>,
  ms: number,
  lateFailure: (error: unknown) => void,
): Promise<RefreshOutcome> {
  return new Promise((resolve, reject) => {
    let waiting = true;
    const timer = setTimeout(() => {
      waiting = false;
      resolve(STILL_RUNNING);
    }, ms);
    flight.then(
      (outcome) => {
        clearTimeout(timer);
        resolve(outcome);
      },
      (error: unknown) => {
        clearTimeout(timer);
        // Nobody waits any more: the failure is ours to tell.
        if (waiting) reject(error);
        else lateFailure(error);
      },
    );
  });
}

/** How long the refresh's own request to the provider may take (never less than a call waits). */
function refreshBudgetMs(deps: AppDeps): number {
  return Math.max(LIMITS.refreshTimeoutMs, deps.config.upstreamTimeoutMs);
}

/** A provider answer not yet known to be stored, with the grant version it was computed from. */
interface PendingSave {
  grantId: string;
  credential: Uint8Array;
  tokens: NewTokens;
  receivedAt: number;
  outcome: Extract<RefreshOutcome, { ok: true }>;
}

async function refreshSurvivingFaults(
  deps: AppDeps,
  app: OAuthApp,
  key: GrantKey,
  seen: string,
): Promise<RefreshOutcome> {
  for (let attempt = 1; ; attempt += 1) {
    const pending: { save?: PendingSave } = {};
    try {
      return await lockedRefresh(deps, app, key, seen, pending);
    } catch (error) {
      // The provider answered: keep its answer whatever happened to the transaction.
      if (pending.save) return saveOnFreshConnection(deps, key, pending.save, error);
      // The database failed before the provider was asked: nothing was spent, so try once more.
      if (attempt >= 2) throw error;
      deps.logger.warn({ err: error, appId: key.appId }, 'oauth refresh transaction failed; retrying once');
    }
  }
}

async function saveOnFreshConnection(
  deps: AppDeps,
  key: GrantKey,
  save: PendingSave,
  cause: unknown,
): Promise<RefreshOutcome> {
  const log = deps.logger.child({ appId: key.appId, clientId: key.clientId });
  log.warn(
    { err: cause },
    'oauth refresh: the lock connection failed after the provider answered; saving anew',
  );
  try {
    const written = await saveRefreshedTokensIf(
      deps.db.prisma,
      deps.envelope,
      key,
      { id: save.grantId, credential: save.credential },
      save.tokens,
      new Date(save.receivedAt),
    );
    if (!written) {
      // Either our first save did commit (only its acknowledgement was lost) or someone else wrote.
      const row = await findGrant(deps.db.prisma, key);
      const stored = row ? await openTokens(deps.envelope, key, row.credential) : null;
      if (stored?.access_token !== save.outcome.value.accessToken) {
        log.warn('oauth refresh: the grant changed meanwhile; the fresh token serves this call only');
      }
    }
  } catch (error) {
    log.error(
      { err: error },
      'oauth refresh: the answer could not be stored; the fresh token serves this call only',
    );
  }
  return save.outcome;
}

async function lockedRefresh(
  deps: AppDeps,
  app: OAuthApp,
  key: GrantKey,
  seen: string,
  pending: { save?: PendingSave },
): Promise<RefreshOutcome> {
  const budgetMs = refreshBudgetMs(deps);
  return deps.db.prisma.$transaction(
    async (tx): Promise<RefreshOutcome> => {
      // Everything inside uses `tx` only: on PGlite the transaction holds the one connection.
      await lockGrant(tx, key);
      const row = await findGrant(tx, key);
      if (!row) return err({ kind: 'auth_required' });
      if (row.status !== 'active') return err({ kind: 'reauth_required' });
      const tokens = await openTokens(deps.envelope, key, row.credential);
      const now = deps.clock.now();
      // Someone refreshed while we waited for the lock: use theirs.
      if (tokens.access_token !== seen && !expiresSoon(row.expiresAt, now)) {
        return ok({ accessToken: tokens.access_token, scopes: row.scopes });
      }
      const refreshToken = tokens.refresh_token;
      if (!refreshToken) {
        await markReauthRequired(tx, row.id, new Date(now));
        await auditConnection(tx, deps.clock, 'system', 'connection.reauth_required', row.id, key, {
          reason: 'no_refresh_token',
        });
        return err({ kind: 'reauth_required' });
      }

      const answer = await callProvider(app, budgetMs, (config) =>
        oidc.refreshTokenGrant(config, refreshToken, resourceParameters(app.auth)),
      );
      if (!answer.ok) {
        const failure = answer.error;
        const reauth = failure.kind === 'oauth_error' && REAUTH_ERRORS.has(failure.error);
        deps.metrics.recordRefresh(key.appId, reauth ? 'reauth_required' : 'failed');
        deps.logger.warn(
          {
            appId: key.appId,
            clientId: key.clientId,
            failure: failure.kind,
            ...(failure.kind === 'oauth_error' ? { oauthError: failure.error } : {}),
            ...('status' in failure ? { status: failure.status } : {}),
            ...(failure.kind === 'unreachable' ? { cause: failure.code } : {}),
          },
          'oauth refresh failed',
        );
        switch (failure.kind) {
          case 'oauth_error':
            if (REAUTH_ERRORS.has(failure.error)) {
              await markReauthRequired(tx, row.id, new Date(deps.clock.now()));
              await auditConnection(tx, deps.clock, 'system', 'connection.reauth_required', row.id, key, {
                reason: failure.error,
              });
              return err({ kind: 'reauth_required' });
            }
            return err({ kind: 'upstream_error', status: failure.status, body: failure.body });
          case 'http_error':
            return err({ kind: 'upstream_error', status: failure.status, body: failure.body });
          case 'unreachable':
            return err({ kind: 'upstream_unreachable', cause: failure.code });
          case 'timeout':
            return err({ kind: 'upstream_timeout' });
        }
      }

      deps.metrics.recordRefresh(key.appId, 'ok');
      const fresh = answer.value;
      const receivedAt = deps.clock.now();
      const scopes = fresh.scope === undefined ? row.scopes : parseScope(fresh.scope, []);
      const next: NewTokens = {
        // No refresh token in the answer: the old one stays valid (RFC 6749 §6).
        tokens: { access_token: fresh.access_token, refresh_token: fresh.refresh_token ?? refreshToken },
        scopes,
        expiresAt: expiryFrom(fresh.expires_in, receivedAt),
      };
      const outcome = ok({ accessToken: fresh.access_token, scopes });
      // From here on the provider has spent the old refresh token: this answer must be stored.
      pending.save = { grantId: row.id, credential: row.credential, tokens: next, receivedAt, outcome };
      await saveRefreshedTokens(tx, deps.envelope, key, row.id, next, new Date(receivedAt));
      return outcome;
    },
    // The provider call runs inside; waiting for another process's refresh counts too.
    { maxWait: budgetMs + 5_000, timeout: 2 * budgetMs + 10_000 },
  );
}
