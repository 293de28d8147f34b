import { apiError, type ErrorBody } from '../../shared/errors.ts';
import type { LoadedApp } from '../apps/registry.ts';
import type { Envelope } from '../crypto/envelope.ts';
import type { PrismaClient } from '../db/generated/client.ts';
import type { Credentials } from './credentials.ts';

/** The envelope context of a grant: a blob bound to its (client, user, app) row. */
export function connectionContext(clientId: string, userId: string, appId: string): string {
  return `connection:${clientId}:${userId}:${appId}`;
}

/** The stored token set of a grant, as sealed in `connections.credential`. */
export interface TokenSet {
  access_token: string;
  refresh_token?: string;
  token_type?: string;
  expires_at?: number | null;
  scope?: string;
}

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

/**
 * The user's access for an oauth2 app: grants are per (client, user, app) and never cross
 * clients or users. Without a usable grant the call answers 401 auth_required.
 */
export async function userCredentials(
  prisma: PrismaClient,
  envelope: Envelope,
  app: LoadedApp,
  clientId: string,
  userId: string,
): Promise<{ ok: true; credentials: Credentials } | { ok: false; body: ErrorBody }> {
  const grant = await prisma.connection.findUnique({
    where: { clientId_userId_appId: { clientId, userId, appId: app.appId } },
    select: { status: true, credential: true },
  });
  if (!grant) return { ok: false, body: authRequired(app.appId) };
  if (grant.status !== 'active') return { ok: false, body: authRequired(app.appId, true) };
  const tokens = JSON.parse(
    await envelope.openString(Buffer.from(grant.credential), connectionContext(clientId, userId, app.appId)),
  ) as TokenSet;
  return { ok: true, credentials: { headers: { authorization: `Bearer ${tokens.access_token}` } } };
}
