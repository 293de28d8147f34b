/**
 * `@toolgate/sdk/ai`: toolgate's tools for the Vercel AI SDK (`ai` 5 or later, an optional peer):
 * a `tools` record for `generateText`, `streamText` and agents, each tool's `execute` running the
 * call through toolgate for the given end user.
 *
 * @packageDocumentation
 */
import type { PrepareStepFunction, ToolSet } from 'ai';
import { loadToolsetFor } from './adapters/load.ts';
import type { ModelToolOutput } from './adapters/model-output.ts';
import type { ToolsetOptions } from './adapters/options.ts';
import { importPeer } from './adapters/peer.ts';
import { portableSchema } from './adapters/schemas.ts';
import type { OfferedTool } from './adapters/search-pair.ts';
import { frameworkLimits, type ToolStrategy } from './adapters/strategy.ts';
import type { ToolCallOutcome, Toolset, ToolsetTool } from './adapters/toolset.ts';
import type { Failure, Result } from './results.ts';
import type { Toolgate } from './toolgate.ts';

export type { ModelToolOutput } from './adapters/model-output.ts';
export type { ToolsetAuthorization, ToolsetOptions } from './adapters/options.ts';
export { MissingPeerError } from './adapters/peer.ts';
export type { OfferedTool } from './adapters/search-pair.ts';
export type { ToolStrategy } from './adapters/strategy.ts';
export type { ToolCallOutcome, Toolset, ToolsetTool } from './adapters/toolset.ts';
export type { ToolSelector, Turn } from './adapters/turn.ts';

/** What `prepareStep` chose for one step. */
export interface AiStepSelection {
  stepNumber: number;
  /** The tools the step offers the model (`activeTools`). */
  activeTools: string[];
  /** The tools selected for the step; `undefined` when nothing was selected (the default tools). */
  selected: ToolsetTool[] | undefined;
  /** The search failed: the step offers the default tools. */
  failure: Failure | undefined;
}

export interface AiToolsOptions extends ToolsetOptions {
  /** Called after each tool call with its whole outcome (logs, metrics, showing a link in a UI). */
  onToolCall?: (outcome: ToolCallOutcome) => void;
  /** Called when `prepareStep` has chosen a step's tools (logs; a failed search shows here). */
  onSelect?: (selection: AiStepSelection) => void;
}

/** What `createAiTools` answers besides `ok`. */
export interface AiTools {
  /**
   * `tools` of `generateText`/`streamText`: the catalog's tools while they fit `maxTools` (default
   * 128), else `search_tools` + `call_tool`; `prepareStep` adds the tools it selects.
   */
  tools: ToolSet;
  /**
   * `prepareStep` of `generateText`/`streamText`: selects each step's tools (the best `limit` for
   * the last user message and the step's text, or `select`'s choice) and answers them as the step's
   * `activeTools` — with `search`, beside the search pair. Never more than `maxTools`.
   */
  prepareStep: PrepareStepFunction<ToolSet>;
  /** How the model reaches the tools: `all` (a tool each) or `search` (the search pair). */
  strategy: ToolStrategy;
  toolset: Toolset;
}

/**
 * A `tools` record for the AI SDK, one dynamic tool per toolgate tool, keyed by its function name
 * (`<appId>__<toolName>`), while the catalog fits `maxTools` (the AI SDK has no limit of its own:
 * give your model's; default 128); above it (`strategy: 'auto'`) `search_tools` + `call_tool`,
 * which reach every tool; `strategy: 'all'` over the limit throws, naming the options that narrow
 * it. `prepareStep` selects the tools step by step instead. Each tool's output is a
 * {@link ModelToolOutput}: `{ ok: true, data }`, or `{ ok: false, error, message, … }` whose
 * `message` tells the model what to do (for `auth_required`: the link to show the user).
 *
 * @example
 * import { generateText, stepCountIs } from 'ai';
 * import { createAiTools } from '@toolgate/sdk/ai';
 *
 * const loaded = await createAiTools(toolgate, {
 *   userId: 'user-42',
 *   apps: ['github'], // 1,223 tools
 *   authorization: { clientRedirectUri: 'https://agent.example/oauth/done' },
 * });
 * if (!loaded.ok) throw new Error(failureMessage(loaded));
 * const { text } = await generateText({
 *   model,
 *   tools: loaded.tools,
 *   prepareStep: loaded.prepareStep, // each step: the 20 best tools for the task, and the search pair
 *   stopWhen: stepCountIs(5),
 *   prompt,
 * });
 */
export async function createAiTools(
  toolgate: Toolgate,
  options: AiToolsOptions = {},
): Promise<Result<AiTools>> {
  const { dynamicTool, jsonSchema } = await importPeer(
    () => import('ai'),
    '@toolgate/sdk/ai',
    'ai',
    '>=5.0.0',
  );
  const loaded = await loadToolsetFor(toolgate, options, frameworkLimits('the model'));
  if (!loaded.ok) return loaded;
  const { toolset } = loaded;
  const tools: ToolSet = {};
  const add = (tool: OfferedTool) => {
    tools[tool.name] ??= dynamicTool({
      description: tool.description,
      inputSchema: jsonSchema(portableSchema(tool.parameters)),
      execute: async (input, { abortSignal }): Promise<ModelToolOutput> => {
        const outcome = await toolset.call(tool.name, input, abortSignal ? { signal: abortSignal } : {});
        options.onToolCall?.(outcome);
        return outcome.output;
      },
    });
  };
  for (const tool of toolset.offered) add(tool);
  const fixed = new Set(Object.keys(tools));
  /** Tools the steps added, least recently selected first. */
  const added = new Set<string>();
  const prepareStep: PrepareStepFunction<ToolSet> = async ({ messages, stepNumber }) => {
    const selected = await toolset.selectFor(messages);
    const picked = selected.ok ? selected.tools : undefined;
    const offered = toolset.offeredWith(picked);
    const active = new Set(offered.map((tool) => tool.name));
    // generateText and streamText read `tools` by name at every step: a tool added here is offered
    // (activeTools) and runs like the first ones. The record keeps to maxTools, dropping the tools
    // selected longest ago, so that it never holds more than a model takes, even where it is
    // given without this prepareStep.
    for (const tool of offered) {
      add(tool);
      if (fixed.has(tool.name)) continue;
      added.delete(tool.name);
      added.add(tool.name);
    }
    for (const name of added) {
      if (Object.keys(tools).length <= toolset.maxTools) break;
      if (active.has(name)) continue;
      added.delete(name);
      delete tools[name];
    }
    const activeTools = [...active];
    options.onSelect?.({
      stepNumber,
      activeTools,
      selected: picked,
      failure: selected.ok ? undefined : selected,
    });
    return { activeTools };
  };
  return { ok: true, tools, prepareStep, strategy: toolset.strategy, toolset, requestId: loaded.requestId };
}
