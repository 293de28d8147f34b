import { apiError, type ErrorBody } from '../../shared/errors.ts';
import { composeToolId, splitToolId } from '../../shared/ids.ts';
import type { AppRegistry, LoadedApp } from '../apps/registry.ts';
import type { CompiledTool } from '../catalog/catalog.ts';
import { err, ok, type Result } from '../result.ts';

export interface ResolvedTool {
  app: LoadedApp;
  tool: CompiledTool;
  /** Composite form `<appId>:::<toolName>`. */
  toolId: string;
}

/** 404 tool_not_found, naming the tool as the caller can read it. */
export function toolNotFound(shown: string): ErrorBody<'tool_not_found'> {
  return apiError('tool_not_found', `No tool ${shown} is registered.`, { tool_id: shown });
}

/** The tool a call names: composite `app:::tool`, or a bare name with X-Service-App-Id. */
export async function resolveTool(
  registry: AppRegistry,
  toolId: string,
  appIdHeader: string | undefined,
): Promise<Result<ResolvedTool, ErrorBody>> {
  const split = splitToolId(toolId) ?? (appIdHeader ? { appId: appIdHeader, toolName: toolId } : null);
  if (!split) return err(toolNotFound(toolId));
  const composite = composeToolId(split.appId, split.toolName);
  const app = await registry.get(split.appId);
  const tool = app?.compiled.tools.get(split.toolName);
  if (!app || !tool) return err(toolNotFound(composite));
  return ok({ app, tool, toolId: composite });
}
