/**
 * `@toolgate/sdk/anthropic`: toolgate's tools for the Anthropic Messages API, and a handler that
 * runs the `tool_use` blocks of a message and answers `tool_result` blocks. Uses
 * `@anthropic-ai/sdk` (an optional peer) for its types only: nothing of it runs here.
 *
 * @packageDocumentation
 */
import type {
  ContentBlock,
  Message,
  Tool,
  ToolResultBlockParam,
} from '@anthropic-ai/sdk/resources/messages/messages';
import { ANTHROPIC_STRICT, portableSchema, strictSchema } from './adapters/schemas.ts';
import { loadToolset, type ToolCallOutcome, type Toolset, type ToolsetOptions } from './adapters/toolset.ts';
import type { Result } from './results.ts';
import type { Toolgate } from './toolgate.ts';

export type { ModelToolOutput } from './adapters/model-output.ts';
export type {
  ToolCallOutcome,
  Toolset,
  ToolsetAuthorization,
  ToolsetOptions,
  ToolsetTool,
} from './adapters/toolset.ts';

export interface AnthropicToolsOptions extends ToolsetOptions {
  /**
   * Strict tool use (default `false`): each tool whose schema it can express is sent with
   * `strict: true` (objects closed; no numeric or length constraints, no recursive schemas); the
   * others without. Anthropic limits strict tools per request (20) and their optional parameters
   * (24 in all): keep the toolset small when turning it on.
   */
  strict?: boolean;
}

export interface HandleToolUsesOptions {
  signal?: AbortSignal;
  /** Called after each call with its whole outcome (logs, metrics, a link to show in a UI). */
  onToolCall?: (outcome: ToolCallOutcome) => void;
}

/**
 * The tools for Anthropic: the Messages API `tools` and the handler of their `tool_use` blocks.
 *
 * @example
 * const message = await anthropic.messages.create({ model, max_tokens: 1024, messages, tools: tools.definitions });
 * messages.push({ role: 'assistant', content: message.content });
 * messages.push({ role: 'user', content: await tools.handleToolUses(message) });
 */
export class AnthropicTools {
  readonly toolset: Toolset;
  /** `tools` of `messages.create`. */
  readonly definitions: Tool[];
  /** Function name → whether it is sent strict, or why not. */
  readonly strictness: ReadonlyMap<string, { strict: true } | { strict: false; reason: string }>;

  constructor(toolset: Toolset, strict: boolean) {
    this.toolset = toolset;
    const strictness = new Map<string, { strict: true } | { strict: false; reason: string }>();
    this.definitions = toolset.tools.map((tool) => {
      const converted = strict ? strictSchema(tool.parameters, ANTHROPIC_STRICT) : undefined;
      if (converted?.ok) strictness.set(tool.name, { strict: true });
      else strictness.set(tool.name, { strict: false, reason: converted?.reason ?? 'strict mode is off' });
      const schema = converted?.ok ? converted.schema : portableSchema(tool.parameters);
      return {
        name: tool.name,
        description: tool.description,
        input_schema: { ...schema, type: 'object' },
        ...(converted?.ok ? { strict: true } : {}),
      };
    });
    this.strictness = strictness;
  }

  /**
   * Runs the `tool_use` blocks of toolgate's tools in a message (or its `content`) side by side
   * and answers their `tool_result` blocks, in order, for the next `user` message; a failure has
   * `is_error: true` and a message the model can act on. `tool_use` blocks of other tools (your
   * own) are left to you: add their results to the same user message.
   */
  async handleToolUses(
    message: Message | ContentBlock[],
    options: HandleToolUsesOptions = {},
  ): Promise<ToolResultBlockParam[]> {
    const content = Array.isArray(message) ? message : message.content;
    const uses = content.filter(
      (block) => block.type === 'tool_use' && this.toolset.get(block.name) !== undefined,
    );
    return Promise.all(
      uses.map(async (block) => {
        const use = block as Extract<ContentBlock, { type: 'tool_use' }>;
        const outcome = await this.toolset.call(
          use.name,
          use.input,
          options.signal ? { signal: options.signal } : {},
        );
        options.onToolCall?.(outcome);
        return {
          type: 'tool_result' as const,
          tool_use_id: use.id,
          content: outcome.text,
          ...(outcome.isError ? { is_error: true } : {}),
        };
      }),
    );
  }
}

/**
 * Reads the catalog and makes the Anthropic tools of one end user.
 *
 * @example
 * import Anthropic from '@anthropic-ai/sdk';
 * import { createAnthropicTools } from '@toolgate/sdk/anthropic';
 *
 * const loaded = await createAnthropicTools(toolgate, { userId: 'user-42', apps: ['github'] });
 * if (!loaded.ok) throw new Error(failureMessage(loaded));
 * const message = await anthropic.messages.create({ model, max_tokens: 1024, messages, tools: loaded.tools.definitions });
 */
export async function createAnthropicTools(
  toolgate: Toolgate,
  options: AnthropicToolsOptions = {},
): Promise<Result<{ tools: AnthropicTools }>> {
  const loaded = await loadToolset(toolgate, options);
  if (!loaded.ok) return loaded;
  return {
    ok: true,
    tools: new AnthropicTools(loaded.toolset, options.strict ?? false),
    requestId: loaded.requestId,
  };
}
