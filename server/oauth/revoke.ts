import * as oidc from 'openid-client';
import type { AppDeps } from '../deps.ts';
import { err, ok, type Result } from '../result.ts';
import { auditConnection, deleteGrant, findGrant, type GrantKey, lockGrant, openTokens } from './grants.ts';
import { callProvider, isOAuthApp } from './provider.ts';

export type DisconnectOutcome = Result<void, 'not_found'>;

/**
 * DELETE /connections/{appId}: forgets the user's grant, first revoking it at the provider when
 * the app registers a revocation endpoint (refresh token, then access token: RFC 7009 lets a
 * server revoke only the one it is given). A revocation that fails is logged, and the grant is
 * forgotten all the same: the user asked to disconnect, and we no longer hold the tokens.
 * Runs under the grant's row lock, so it revokes the tokens a concurrent refresh just stored.
 *
 * @see https://www.rfc-editor.org/rfc/rfc7009
 */
export async function disconnect(deps: AppDeps, key: GrantKey, actor: string): Promise<DisconnectOutcome> {
  const app = await deps.apps.get(key.appId);
  const budgetMs = deps.config.upstreamTimeoutMs;
  return deps.db.prisma.$transaction(
    async (tx): Promise<DisconnectOutcome> => {
      await lockGrant(tx, key);
      const row = await findGrant(tx, key);
      if (!row) return err('not_found');
      if (app && isOAuthApp(app) && app.auth.revocationUrl && row.status === 'active') {
        const tokens = await openTokens(deps.envelope, key, row.credential);
        const revocations: Array<{ token: string; hint: 'refresh_token' | 'access_token' }> = [
          { token: tokens.access_token, hint: 'access_token' },
        ];
        if (tokens.refresh_token) revocations.unshift({ token: tokens.refresh_token, hint: 'refresh_token' });
        for (const { token, hint } of revocations) {
          const revoked = await callProvider(app, budgetMs, (config) =>
            oidc.tokenRevocation(config, token, { token_type_hint: hint }),
          );
          if (!revoked.ok) {
            deps.logger.warn(
              { appId: key.appId, clientId: key.clientId, hint, failure: revoked.error.kind },
              'oauth revocation failed; forgetting the grant anyway',
            );
          }
        }
      }
      await deleteGrant(tx, row.id);
      await auditConnection(tx, deps.clock, actor, 'connection.deleted', row.id, key);
      return ok(undefined);
    },
    { maxWait: budgetMs + 5_000, timeout: 4 * budgetMs + 10_000 },
  );
}
