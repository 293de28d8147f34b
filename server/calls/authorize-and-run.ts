import { authRequired, refreshRejected, userAccess } from '../oauth/access.ts';
import { findGrant, markReauthRequired } from '../oauth/grants.ts';
import { isOAuthApp } from '../oauth/provider.ts';
import { bearer, serviceCredentials } from './credentials.ts';
import { runMcpTool } from './run-mcp-tool.ts';
import { type RunOutcome, runTool } from './run-tool.ts';
import type { ToolCall } from './tool-call.ts';

/** The upstream answered 401: the token it was given is expired, revoked or otherwise refused. */
function tokenRefused(outcome: RunOutcome): boolean {
  return !outcome.ok && outcome.error.error === 'upstream_error' && outcome.error.upstream_status === 401;
}

/**
 * The last steps of a call, after idempotency: user authorization (oauth2 apps) or the app's own
 * credential, then the upstream. Every secret put into the request is added to `call.seen`.
 */
export async function authorizeAndRun(call: ToolCall): Promise<RunOutcome> {
  const { deps, target, seen } = call;
  const { app } = target;
  // An app from an MCP server is called through its tools/call, with the same credentials.
  const run = app.mcpUrl === null ? runTool : runMcpTool;
  if (!isOAuthApp(app)) {
    const credentials = await serviceCredentials(app);
    for (const values of [credentials.headers, credentials.query]) {
      if (values) for (const value of Object.values(values)) seen.add(value);
    }
    return run(call, credentials);
  }

  // X-Service-User-Id was checked before this step: an oauth2 app's call has one.
  const key = { clientId: call.caller.clientId, userId: call.request.userId as string, appId: app.appId };
  const scopes = target.tool.tool.scopes;
  const access = await userAccess(deps, app, key, scopes, seen);
  if (!access.ok) return access;
  const { accessToken } = access.value;
  const first = await run(call, bearer(accessToken));
  // A token refreshed for this very call is not refreshed again: the 401 stands.
  if (access.value.refreshed || !tokenRefused(first)) return mcpRefusal(call, first);
  const retried = await refreshRejected(deps, app, key, accessToken, scopes, seen);
  if (!retried.ok) return retried;
  return mcpRefusal(call, await run(call, bearer(retried.value.accessToken)));
}

/**
 * An MCP server that still answers 401 to a fresh token of the user's grant wants the user to
 * authorize again (MCP authorization: its `WWW-Authenticate` challenge is for the user, not for
 * the agent): the grant is marked, and the call answers `auth_required` with `reauth_required`.
 */
async function mcpRefusal(call: ToolCall, outcome: RunOutcome): Promise<RunOutcome> {
  const { app } = call.target;
  if (app.mcpUrl === null || !tokenRefused(outcome)) return outcome;
  const key = { clientId: call.caller.clientId, userId: call.request.userId as string, appId: app.appId };
  const { prisma } = call.deps.db;
  const row = await findGrant(prisma, key);
  if (row?.status === 'active') await markReauthRequired(prisma, row.id, new Date(call.deps.clock.now()));
  return { ok: false, error: authRequired(app.appId, true) };
}
