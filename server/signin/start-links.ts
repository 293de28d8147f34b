import type { AppDeps } from '../deps.ts';
import { newId } from '../ids.ts';
import { startAuthorization } from '../oauth/initiate.ts';
import { isOAuthApp } from '../oauth/provider.ts';
import { userIdOf } from './session.ts';

/**
 * URL elicitation bound to the signed-in person (docs/reference.md "MCP sign-in"): for a caller
 * signed in through MCP sign-in, the link an MCP client shows is `{base}/oauth/start/{id}`, not
 * the provider's URL. The provider's flow starts only when that link is opened in a browser signed
 * in as the same person; another person gets a 403 page, nobody signed in signs in first. So a link
 * passed to someone else cannot attach their provider account to the first person's id.
 */

export const START_TTL_MS = 10 * 60 * 1000;
const START_ID = /^osl_[a-z0-9]{20}$/;

/** A link for (client, user, app), valid START_TTL_MS. */
export async function createStartLink(
  deps: AppDeps,
  link: { clientId: string; userId: string; appId: string },
): Promise<string> {
  const id = newId('oauthStart');
  const now = deps.clock.now();
  await deps.db.prisma.oAuthStart.create({
    data: { id, ...link, expiresAt: new Date(now + START_TTL_MS), createdAt: new Date(now) },
    select: { id: true },
  });
  return `${deps.config.publicUrl}/oauth/start/${id}`;
}

export type StartOutcome =
  | { kind: 'unknown' }
  | { kind: 'forbidden' }
  | { kind: 'provider'; location: string };

/** Opening a link as `sub` (signed in): the provider's authorization URL, or why not. */
export async function openStartLink(deps: AppDeps, id: string, sub: string): Promise<StartOutcome> {
  if (!START_ID.test(id)) return { kind: 'unknown' };
  const link = await deps.db.prisma.oAuthStart.findFirst({
    where: { id, expiresAt: { gt: new Date(deps.clock.now()) } },
    select: { clientId: true, userId: true, appId: true },
  });
  if (!link) return { kind: 'unknown' };
  if (link.userId !== userIdOf(sub)) return { kind: 'forbidden' };
  const app = await deps.apps.get(link.appId);
  if (!app || !isOAuthApp(app)) return { kind: 'unknown' };
  const flow = await startAuthorization(deps, link.clientId, link.userId, app, null);
  return { kind: 'provider', location: flow.authorizationUrl };
}

/** Whether a link of this shape exists, unexpired (asked before sending someone to sign in). */
export async function startLinkExists(deps: AppDeps, id: string): Promise<boolean> {
  if (!START_ID.test(id)) return false;
  const link = await deps.db.prisma.oAuthStart.findFirst({
    where: { id, expiresAt: { gt: new Date(deps.clock.now()) } },
    select: { id: true },
  });
  return link !== null;
}
