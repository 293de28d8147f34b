/**
 * `@toolgate/sdk/ai`: toolgate's tools for the Vercel AI SDK (`ai` 5 or later, an optional peer):
 * a `tools` record for `generateText`, `streamText` and agents, each tool's `execute` running the
 * call through toolgate for the given end user.
 *
 * @packageDocumentation
 */
import type { ToolSet } from 'ai';
import type { ModelToolOutput } from './adapters/model-output.ts';
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

export interface AiToolsOptions extends ToolsetOptions {
  /** Called after each tool call with its whole outcome (logs, metrics, showing a link in a UI). */
  onToolCall?: (outcome: ToolCallOutcome) => void;
}

/**
 * A `tools` record for the AI SDK, one dynamic tool per toolgate tool, keyed by its function name
 * (`<appId>__<toolName>`). Each tool's output is a {@link ModelToolOutput}: `{ ok: true, data }`,
 * or `{ ok: false, error, message, … }` whose `message` tells the model what to do (for
 * `auth_required`: the link to show the user).
 *
 * @example
 * import { generateText, stepCountIs } from 'ai';
 * import { createAiTools } from '@toolgate/sdk/ai';
 *
 * const loaded = await createAiTools(toolgate, {
 *   userId: 'user-42',
 *   apps: ['github'],
 *   authorization: { clientRedirectUri: 'https://agent.example/oauth/done' },
 * });
 * if (!loaded.ok) throw new Error(failureMessage(loaded));
 * const { text } = await generateText({ model, tools: loaded.tools, stopWhen: stepCountIs(5), prompt });
 */
export async function createAiTools(
  toolgate: Toolgate,
  options: AiToolsOptions = {},
): Promise<Result<{ tools: ToolSet; toolset: Toolset }>> {
  const { dynamicTool, jsonSchema } = await importPeer(
    () => import('ai'),
    '@toolgate/sdk/ai',
    'ai',
    '>=5.0.0',
  );
  const loaded = await loadToolset(toolgate, options);
  if (!loaded.ok) return loaded;
  const { toolset } = loaded;
  const tools: ToolSet = {};
  for (const tool of toolset.tools) {
    tools[tool.name] = dynamicTool({
      description: tool.description,
      inputSchema: jsonSchema(portableSchema(tool.parameters)),
      execute: async (input, { abortSignal }): Promise<ModelToolOutput> => {
        const outcome = await toolset.call(tool.name, input, abortSignal ? { signal: abortSignal } : {});
        options.onToolCall?.(outcome);
        return outcome.output;
      },
    });
  }
  return { ok: true, tools, toolset, requestId: loaded.requestId };
}
