/**
 * MCP sign-in leaves rows behind by design — logins and consent requests that were abandoned,
 * codes and tokens that expired or were spent — and none of them is needed a day after it
 * expires. Each server purges them on its own timer, off the request path; two servers purging
 * at once delete the same rows at worst, which is harmless.
 */
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import { LIMITS } from '../config.ts';
import type { PrismaClient } from '../db/generated/client.ts';
import { type Purger, startPurger } from '../idempotency/purge.ts';

/**
 * Rows stay this long after they expire: a spent code or refresh token presented again soon
 * after still finds its row, so its token family is revoked (reuse detection) instead of the
 * token merely being unknown.
 */
export const SIGNIN_KEPT_AFTER_EXPIRY_MS = 24 * 60 * 60 * 1000;

/** One pass: what expired more than a day ago, then grants left with no token and no code. */
export async function purgeSignin(prisma: PrismaClient, now: number): Promise<number> {
  const cutoff = new Date(now - SIGNIN_KEPT_AFTER_EXPIRY_MS);
  const where = { where: { expiresAt: { lt: cutoff } } };
  let deleted = 0;
  deleted += (await prisma.signinLogin.deleteMany(where)).count;
  deleted += (await prisma.signinRequest.deleteMany(where)).count;
  deleted += (await prisma.signinCode.deleteMany(where)).count;
  deleted += (await prisma.signinToken.deleteMany(where)).count;
  deleted += (await prisma.oAuthStart.deleteMany(where)).count;
  // A grant is its tokens' family: with all of them gone (and no code that could still name it)
  // it revokes nothing and grants nothing.
  deleted += await prisma.$executeRaw`
    DELETE FROM signin_grants g
    WHERE g.created_at < ${cutoff}
      AND NOT EXISTS (SELECT 1 FROM signin_tokens t WHERE t.grant_id = g.id)
      AND NOT EXISTS (SELECT 1 FROM signin_codes c WHERE c.grant_id = g.id)`;
  return deleted;
}

export function startSigninPurge(prisma: PrismaClient, clock: Clock, logger: Logger): Purger {
  return startPurger(
    () => purgeSignin(prisma, clock.now()),
    LIMITS.signinPurgeIntervalMs,
    logger,
    'expired MCP sign-in rows',
  );
}
