import type { AppDeps } from '../deps.ts';
import { refreshRejected, type SeenSecrets, userAccess } from '../oauth/access.ts';
import { isOAuthApp } from '../oauth/provider.ts';
import { bearer, serviceCredentials } from './credentials.ts';
import type { ResolvedTool } from './resolve.ts';
import { type RunLimits, type RunOutcome, runTool, type UpstreamReport } from './run-tool.ts';

export interface CallIdentity {
  clientId: string;
  /** X-Service-User-Id as sent (undefined when absent; checked before this step for oauth2 apps). */
  userId: string | undefined;
}

/** The upstream answered 401: the token it was given is expired, revoked or otherwise refused. */
function tokenRefused(outcome: RunOutcome): boolean {
  return !outcome.ok && outcome.error.error === 'upstream_error' && outcome.error.upstream_status === 401;
}

/**
 * The last steps of a call, after idempotency: user authorization (oauth2 apps) or the app's own
 * credential, then the upstream. Every secret put into the request is added to `seen`.
 */
export async function authorizeAndRun(
  deps: AppDeps,
  resolved: ResolvedTool,
  identity: CallIdentity,
  parameters: Record<string, unknown>,
  startedAt: number,
  seen: SeenSecrets,
  report?: UpstreamReport,
): Promise<RunOutcome> {
  const { app } = resolved;
  const limits: RunLimits = {
    timeoutMs: deps.config.upstreamTimeoutMs,
    maxBodyBytes: deps.config.maxUpstreamBodyBytes,
  };
  if (!isOAuthApp(app)) {
    const credentials = await serviceCredentials(app);
    for (const values of [credentials.headers, credentials.query]) {
      if (values) for (const value of Object.values(values)) seen.add(value);
    }
    return runTool(resolved, parameters, credentials, startedAt, limits, seen, report);
  }

  const key = { clientId: identity.clientId, userId: identity.userId as string, appId: app.appId };
  const scopes = resolved.tool.tool.scopes;
  const access = await userAccess(deps, app, key, scopes, seen);
  if (!access.ok) return access;
  const { accessToken } = access.value;
  const first = await runTool(resolved, parameters, bearer(accessToken), startedAt, limits, seen, report);
  // A token refreshed for this very call is not refreshed again: the 401 stands.
  if (access.value.refreshed || !tokenRefused(first)) return first;
  const retried = await refreshRejected(deps, app, key, accessToken, scopes, seen);
  if (!retried.ok) return retried;
  return runTool(resolved, parameters, bearer(retried.value.accessToken), startedAt, limits, seen, report);
}
