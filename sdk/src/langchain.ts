/**
 * `@toolgate/sdk/langchain`: toolgate's tools as LangChain.js `StructuredTool`s
 * (`@langchain/core`, an optional peer), for `createAgent`, LangGraph, or `model.bindTools`.
 *
 * @packageDocumentation
 */
import type { StructuredTool } from '@langchain/core/tools';
import { importPeer } from './adapters/peer.ts';
import { portableSchema } from './adapters/schemas.ts';
import { loadToolset, type ToolCallOutcome, type Toolset, type ToolsetOptions } from './adapters/toolset.ts';
import type { Result } from './results.ts';
import type { Toolgate } from './toolgate.ts';

export type { ModelToolOutput } from './adapters/model-output.ts';
export { MissingPeerError } from './adapters/peer.ts';
export type {
  ToolCallOutcome,
  Toolset,
  ToolsetAuthorization,
  ToolsetOptions,
  ToolsetTool,
} from './adapters/toolset.ts';

export interface LangChainToolsOptions extends ToolsetOptions {
  /** Called after each tool call with its whole outcome (logs, metrics, a link to show in a UI). */
  onToolCall?: (outcome: ToolCallOutcome) => void;
}

/**
 * One `DynamicStructuredTool` per toolgate tool, named `<appId>__<toolName>`. A tool answers
 * `content_and_artifact`: the content is the {@link ModelToolOutput} as JSON text (for
 * `auth_required`, with the link to show the user), the artifact the whole {@link ToolCallOutcome}
 * (`ToolMessage.artifact` when invoked with a tool call).
 *
 * @example
 * import { createAgent } from 'langchain';
 * import { createLangChainTools } from '@toolgate/sdk/langchain';
 *
 * const loaded = await createLangChainTools(toolgate, { userId: 'user-42', apps: ['github'] });
 * if (!loaded.ok) throw new Error(failureMessage(loaded));
 * const agent = createAgent({ model: 'openai:gpt-5', tools: loaded.tools });
 */
export async function createLangChainTools(
  toolgate: Toolgate,
  options: LangChainToolsOptions = {},
): Promise<Result<{ tools: StructuredTool[]; toolset: Toolset }>> {
  const { DynamicStructuredTool } = await importPeer(
    () => import('@langchain/core/tools'),
    '@toolgate/sdk/langchain',
    '@langchain/core',
    '^1.0.0',
  );
  const loaded = await loadToolset(toolgate, options);
  if (!loaded.ok) return loaded;
  const { toolset } = loaded;
  const tools: StructuredTool[] = toolset.tools.map(
    (tool) =>
      new DynamicStructuredTool({
        name: tool.name,
        description: tool.description,
        schema: portableSchema(tool.parameters),
        responseFormat: 'content_and_artifact',
        func: async (input: unknown, _runManager, config) => {
          const outcome = await toolset.call(
            tool.name,
            input,
            config?.signal ? { signal: config.signal } : {},
          );
          options.onToolCall?.(outcome);
          return [outcome.text, outcome] as [string, ToolCallOutcome];
        },
      }),
  );
  return { ok: true, tools, toolset, requestId: loaded.requestId };
}
