import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { LIMITS } from '../config.ts';
import type { PrismaClient } from '../db/generated/client.ts';

/**
 * OAuth state rows: the state itself is a bearer secret for the callback, so only its SHA-256 is
 * stored; the PKCE verifier is sealed with a context naming that hash.
 */

/** The path the provider redirects the browser back to, below PUBLIC_URL. */
export const CALLBACK_PATH = '/handleOAuthCallback';

export function callbackUrl(publicUrl: string): string {
  return `${publicUrl}${CALLBACK_PATH}`;
}

/** The page a flow without a client redirect URI (started from MCP) ends on. */
export const COMPLETE_PATH = '/oauth/complete';

/** `/oauth/complete` naming the app; the callback adds `status` (and `reason`). */
export function completePageUrl(publicUrl: string, appId: string): string {
  return `${publicUrl}${COMPLETE_PATH}?app=${encodeURIComponent(appId)}`;
}

export function hashState(state: string): string {
  return createHash('sha256').update(state, 'utf8').digest('hex');
}

/** The envelope context of a state's PKCE verifier: bound to its row. */
export function verifierContext(stateHash: string): string {
  return `oauth-state:${stateHash}`;
}

const PRUNE_EVERY_MS = 60_000;
const lastPrune = new WeakMap<PrismaClient, number>();

/**
 * Forgets states that expired more than LIMITS.oauthStateRetentionMs ago (a late callback within
 * that time still gets its 302). At most once a minute per process; never awaited by a request.
 */
export function pruneStates(prisma: PrismaClient, now: number, logger: Logger): void {
  if (now - (lastPrune.get(prisma) ?? Number.NEGATIVE_INFINITY) < PRUNE_EVERY_MS) return;
  lastPrune.set(prisma, now);
  prisma.oAuthState
    .deleteMany({ where: { expiresAt: { lt: new Date(now - LIMITS.oauthStateRetentionMs) } } })
    .catch((error: unknown) => logger.warn({ err: error }, 'pruning old OAuth states failed'));
}
