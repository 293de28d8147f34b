import { apiError, type ErrorBody, type Issue } from '../../shared/errors.ts';
import { composeToolId, splitToolId } from '../../shared/ids.ts';
import type { ProxySuccess } from '../../shared/schemas/agent.ts';
import type { AppRegistry, LoadedApp } from '../apps/registry.ts';
import type { Principal } from '../auth/authenticate.ts';
import { canExecute, executeScopeFor } from '../auth/scopes.ts';
import type { CompiledTool } from '../catalog/catalog.ts';
import { keyLacksScope } from '../problem.ts';
import type { Credentials } from './credentials.ts';
import { callUpstream, toData } from './upstream.ts';

export type ExecuteOutcome = { ok: true; body: ProxySuccess } | { ok: false; body: ErrorBody };

export interface ResolvedTool {
  app: LoadedApp;
  tool: CompiledTool;
  toolId: string;
}

/** The tool a call names: composite `app:::tool`, or a bare name with X-Service-App-Id. */
export async function resolveTool(
  registry: AppRegistry,
  toolId: string,
  appIdHeader: string | undefined,
): Promise<{ ok: true; resolved: ResolvedTool } | { ok: false; body: ErrorBody }> {
  const split = splitToolId(toolId) ?? (appIdHeader ? { appId: appIdHeader, toolName: toolId } : null);
  const notFound = (shown: string) =>
    ({
      ok: false,
      body: apiError('tool_not_found', `No tool ${shown} is registered.`, { tool_id: shown }),
    }) as const;
  if (!split) return notFound(toolId);
  const composite = composeToolId(split.appId, split.toolName);
  const app = await registry.get(split.appId);
  const tool = app?.compiled.tools.get(split.toolName);
  if (!app || !tool) return notFound(composite);
  return { ok: true, resolved: { app, tool, toolId: composite } };
}

/** Scope and parameters: the checks between "tool exists" and "idempotency" in the contract's order. */
export function authorizeAndValidate(
  principal: Principal,
  resolved: ResolvedTool,
  parameters: Record<string, unknown>,
  /** Problems found before parsing (a `__proto__` name, which the body parser drops). */
  earlierIssues: Issue[] = [],
): ErrorBody | null {
  if (!canExecute(principal.scopes, resolved.app.appId)) {
    return keyLacksScope(executeScopeFor(resolved.app.appId));
  }
  const issues = [...earlierIssues, ...resolved.tool.validate(parameters)];
  if (issues.length > 0) {
    return apiError('invalid_parameters', 'The parameters do not match the tool.', {
      tool_id: resolved.toolId,
      issues,
    });
  }
  return null;
}

/** Runs a resolved, authorized, validated call against the upstream and shapes the envelope. */
export async function runTool(
  resolved: ResolvedTool,
  parameters: Record<string, unknown>,
  credentials: Credentials,
  startedAt: number,
  timeoutMs: number,
): Promise<ExecuteOutcome> {
  const { app, tool, toolId } = resolved;
  const built = tool.buildRequest(app.baseUrl, parameters, { credentials });
  if (!built.ok) {
    return {
      ok: false,
      body: apiError('invalid_parameters', 'The parameters cannot be sent to the upstream.', {
        tool_id: toolId,
        issues: built.issues,
      }),
    };
  }
  const outcome = await callUpstream(built, timeoutMs);
  if (!outcome.ok) {
    switch (outcome.error) {
      case 'upstream_error':
        return {
          ok: false,
          body: apiError('upstream_error', `The upstream answered ${outcome.status}.`, {
            upstream_status: outcome.status,
            upstream_body: outcome.body,
          }),
        };
      case 'upstream_timeout':
        return { ok: false, body: apiError('upstream_timeout', 'The upstream did not answer in time.') };
      case 'upstream_unreachable':
        return { ok: false, body: apiError('upstream_unreachable', 'The upstream could not be reached.') };
    }
  }
  return {
    ok: true,
    body: {
      ok: true,
      data: toData(outcome.contentType, outcome.body),
      meta: {
        tool_id: toolId,
        duration_ms: Math.round(performance.now() - startedAt),
        provider: app.provider,
      },
    },
  };
}
