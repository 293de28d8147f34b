/**
 * `@toolgate/sdk/langchain`: toolgate's tools as LangChain.js `StructuredTool`s
 * (`@langchain/core`, an optional peer), for `createAgent`, LangGraph, or `model.bindTools`.
 *
 * @packageDocumentation
 */
import type { BaseMessage } from '@langchain/core/messages';
import type { StructuredTool } from '@langchain/core/tools';
import { loadToolsetFor } from './adapters/load.ts';
import type { ToolsetOptions } from './adapters/options.ts';
import { importPeer } from './adapters/peer.ts';
import { portableSchema } from './adapters/schemas.ts';
import type { OfferedTool } from './adapters/search-pair.ts';
import { frameworkLimits, type ToolStrategy } from './adapters/strategy.ts';
import type { ToolCallOutcome, Toolset, ToolsetTool } from './adapters/toolset.ts';
import type { Result } from './results.ts';
import type { Toolgate } from './toolgate.ts';

export type { ModelToolOutput } from './adapters/model-output.ts';
export type { ToolsetAuthorization, ToolsetOptions } from './adapters/options.ts';
export { MissingPeerError } from './adapters/peer.ts';
export type { OfferedTool } from './adapters/search-pair.ts';
export type { ToolStrategy } from './adapters/strategy.ts';
export type { ToolCallOutcome, Toolset, ToolsetTool } from './adapters/toolset.ts';
export type { ToolSelector, Turn } from './adapters/turn.ts';

export interface LangChainToolsOptions extends ToolsetOptions {
  /** Called after each tool call with its whole outcome (logs, metrics, a link to show in a UI). */
  onToolCall?: (outcome: ToolCallOutcome) => void;
}

/** What `createLangChainTools` answers besides `ok`. */
export interface LangChainTools {
  /** The tools to give the agent or `bindTools`: the catalog's, or `search_tools` + `call_tool`. */
  tools: StructuredTool[];
  /** How the model reaches the tools: `all` (a tool each) or `search` (the search pair). */
  strategy: ToolStrategy;
  toolset: Toolset;
  /**
   * The tools of one turn (`model.bindTools(turn.tools)`): those that fit its text (the last human
   * message; see `select` and `limit`), and with `search` the search pair besides; without a
   * selection, {@link tools}.
   */
  forTurn(
    input: string | readonly BaseMessage[],
    options?: { signal?: AbortSignal },
  ): Promise<Result<{ tools: StructuredTool[]; selected: ToolsetTool[] | undefined }>>;
}

/**
 * One `DynamicStructuredTool` per toolgate tool, named `<appId>__<toolName>`, while the catalog
 * fits `maxTools` (LangChain.js has no limit of its own: give your model's; default 128); above it
 * (`strategy: 'auto'`) `search_tools` + `call_tool`, which reach every tool; `strategy: 'all'` over
 * the limit throws, naming the options that narrow it. A tool answers `content_and_artifact`: the
 * content is the {@link ModelToolOutput} as JSON text (for `auth_required`, with the link to show
 * the user), the artifact the whole {@link ToolCallOutcome} (`ToolMessage.artifact` when invoked
 * with a tool call).
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
): Promise<Result<LangChainTools>> {
  const { DynamicStructuredTool } = await importPeer(
    () => import('@langchain/core/tools'),
    '@toolgate/sdk/langchain',
    '@langchain/core',
    '^1.0.0',
  );
  const loaded = await loadToolsetFor(toolgate, options, frameworkLimits('the model'));
  if (!loaded.ok) return loaded;
  const { toolset } = loaded;
  const made = new Map<string, StructuredTool>();
  const structured = (tool: OfferedTool): StructuredTool => {
    const known = made.get(tool.name);
    if (known) return known;
    const created = new DynamicStructuredTool({
      name: tool.name,
      description: tool.description,
      schema: portableSchema(tool.parameters),
      responseFormat: 'content_and_artifact',
      func: async (input: unknown, _runManager, config) => {
        const outcome = await toolset.call(tool.name, input, config?.signal ? { signal: config.signal } : {});
        options.onToolCall?.(outcome);
        return [outcome.text, outcome] as [string, ToolCallOutcome];
      },
    });
    made.set(tool.name, created);
    return created;
  };
  return {
    ok: true,
    tools: toolset.offered.map(structured),
    strategy: toolset.strategy,
    toolset,
    forTurn: async (input, turnOptions = {}) => {
      const selected = await toolset.selectFor(input, turnOptions);
      if (!selected.ok) return selected;
      return {
        ok: true,
        tools: toolset.offeredWith(selected.tools).map(structured),
        selected: selected.tools,
        requestId: selected.requestId,
      };
    },
    requestId: loaded.requestId,
  };
}
