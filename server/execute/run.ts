import type { ErrorBody } from '../../shared/errors.ts';
import { userIdSchema } from '../../shared/ids.ts';
import type { AppDeps } from '../deps.ts';
import { isOAuthApp } from '../oauth/provider.ts';
import { badHeader } from '../problem.ts';
import type { Credentials } from './credentials.ts';
import { serviceCredentials } from './credentials.ts';
import { type ExecuteOutcome, type ResolvedTool, runTool } from './execute.ts';
import { refreshRejected, userAccess } from './user-grant.ts';

const HEADER_NAME = 'X-Service-User-Id';

export interface CallIdentity {
  clientId: string;
  /** X-Service-User-Id as sent (undefined when absent). */
  userId: string | undefined;
}

/** X-Service-User-Id: absent is fine unless the tool needs a user; present must be 1–256 chars. */
export function checkUserHeader(userId: string | undefined, required: boolean): ErrorBody | null {
  if (userId === undefined) {
    return required ? badHeader(`${HEADER_NAME} is required: this tool acts for an end user.`) : null;
  }
  return userIdSchema.safeParse(userId).success
    ? null
    : badHeader(`${HEADER_NAME} must be 1 to 256 characters.`);
}

const bearer = (accessToken: string): Credentials => ({
  headers: { authorization: `Bearer ${accessToken}` },
});

/** The upstream answered 401: the token it was given is expired, revoked or otherwise refused. */
function tokenRefused(outcome: ExecuteOutcome): boolean {
  return !outcome.ok && outcome.body.error === 'upstream_error' && outcome.body.upstream_status === 401;
}

/**
 * The last two steps of a call, after idempotency: user authorization (oauth2 apps) or the
 * app's own credential, then the upstream. Every failure is a contract body.
 */
export async function authorizeAndRun(
  deps: AppDeps,
  resolved: ResolvedTool,
  identity: CallIdentity,
  parameters: Record<string, unknown>,
  startedAt: number,
): Promise<ExecuteOutcome> {
  const { app } = resolved;
  const timeoutMs = deps.config.upstreamTimeoutMs;
  if (!isOAuthApp(app)) {
    return runTool(resolved, parameters, await serviceCredentials(app), startedAt, timeoutMs);
  }

  // The router has checked the header (checkUserHeader) before we get here.
  const key = { clientId: identity.clientId, userId: identity.userId as string, appId: app.appId };
  const scopes = resolved.tool.tool.scopes;
  const access = await userAccess(deps, app, key, scopes);
  if (!access.ok) return access;
  const first = await runTool(resolved, parameters, bearer(access.accessToken), startedAt, timeoutMs);
  // A token refreshed for this very call is not refreshed again: the 401 stands.
  if (access.refreshed || !tokenRefused(first)) return first;
  const retried = await refreshRejected(deps, app, key, access.accessToken, scopes);
  if (!retried.ok) return retried;
  return runTool(resolved, parameters, bearer(retried.accessToken), startedAt, timeoutMs);
}
