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
  MessageParam,
  Tool,
  ToolResultBlockParam,
  ToolSearchToolBm25_20251119,
  ToolSearchToolRegex20251119,
} from '@anthropic-ai/sdk/resources/messages/messages';
import { loadToolsetFor } from './adapters/load.ts';
import type { ToolsetOptions } from './adapters/options.ts';
import { ANTHROPIC_STRICT, portableSchema, strictSchema } from './adapters/schemas.ts';
import type { OfferedTool } from './adapters/search-pair.ts';
import { ANTHROPIC_LIMITS, type ToolStrategy } from './adapters/strategy.ts';
import type { ToolCallOutcome, Toolset, ToolsetTool } from './adapters/toolset.ts';
import { ToolgateArgumentError } from './assert.ts';
import type { Result } from './results.ts';
import type { Toolgate } from './toolgate.ts';

export type { ModelToolOutput } from './adapters/model-output.ts';
export type { ToolsetAuthorization, ToolsetOptions } from './adapters/options.ts';
export type { OfferedTool } from './adapters/search-pair.ts';
export type { ToolStrategy } from './adapters/strategy.ts';
export type { ToolCallOutcome, Toolset, ToolsetTool } from './adapters/toolset.ts';
export type { ToolSelector, Turn } from './adapters/turn.ts';

/** A definition of `tools`: a tool, or Anthropic's tool search tool (`strategy: 'defer'`). */
export type AnthropicDefinition = Tool | ToolSearchToolBm25_20251119 | ToolSearchToolRegex20251119;

/** Anthropic's tool search tools (server tools): regular expressions, or BM25 over natural language. */
const TOOL_SEARCH = {
  bm25: { type: 'tool_search_tool_bm25_20251119', name: 'tool_search_tool_bm25' },
  regex: { type: 'tool_search_tool_regex_20251119', name: 'tool_search_tool_regex' },
} as const satisfies { bm25: ToolSearchToolBm25_20251119; regex: ToolSearchToolRegex20251119 };

export interface AnthropicToolsOptions extends Omit<ToolsetOptions, 'strategy'> {
  /**
   * How Claude reaches the tools (default `auto`): `all` (a definition each; more than `maxTools`
   * is an error), `defer` (every tool `defer_loading: true`, beside Anthropic's tool search tool,
   * which loads the 3–5 a task needs; up to 10,000 tools; Claude Sonnet 4.5, Opus 4.5, Haiku 4.5 or
   * later), `search` (toolgate's `search_tools` + `call_tool`, any model, any catalog size), or
   * `auto`: `all` within `maxTools` (default 128), else `defer` up to 10,000 tools, else `search`.
   */
  strategy?: 'auto' | 'all' | 'search' | 'defer';
  /** Anthropic's tool search tool for `defer`: `bm25` (natural language; the default) or `regex`. */
  toolSearch?: 'bm25' | 'regex';
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
 * Never more direct definitions than `maxTools` (default 128): a larger catalog is deferred beside
 * Anthropic's tool search tool (`strategy: 'defer'`), or offered as `search_tools` + `call_tool`.
 *
 * @example
 * const message = await anthropic.messages.create({ model, max_tokens: 1024, messages, tools: tools.definitions });
 * messages.push({ role: 'assistant', content: message.content });
 * messages.push({ role: 'user', content: await tools.handleToolUses(message) });
 */
export class AnthropicTools {
  readonly toolset: Toolset;
  /** How Claude reaches the tools: `all`, `defer` or `search`. */
  readonly strategy: ToolStrategy;
  /**
   * `tools` of `messages.create`: the tools (with `defer`: each `defer_loading: true`, after
   * Anthropic's tool search tool), or with `search` toolgate's search pair.
   */
  readonly definitions: AnthropicDefinition[];
  /** Function name → whether it is sent strict, or why not (each tool defined so far). */
  readonly strictness: ReadonlyMap<string, { strict: true } | { strict: false; reason: string }>;
  readonly #strictness = new Map<string, { strict: true } | { strict: false; reason: string }>();
  readonly #definitions = new Map<string, Tool>();
  readonly #strict: boolean;
  readonly #toolSearch: ToolSearchToolBm25_20251119 | ToolSearchToolRegex20251119;

  constructor(toolset: Toolset, strict: boolean, toolSearch: 'bm25' | 'regex' = 'bm25') {
    this.toolset = toolset;
    this.strategy = toolset.strategy;
    this.strictness = this.#strictness;
    this.#strict = strict;
    this.#toolSearch = { ...TOOL_SEARCH[toolSearch] };
    this.definitions = this.#turn(undefined);
  }

  /**
   * The `tools` of one turn: the tools that fit its text (the last user message with text; see
   * `select` and `limit`). With `all` only those; with `search` those and the search pair; with
   * `defer` those loaded and every other tool still deferred. Without a selection (no text, or nothing found) the
   * default {@link definitions}.
   *
   * @example
   * const turn = await tools.forTurn(messages);
   * if (!turn.ok) throw new Error(failureMessage(turn));
   * const message = await anthropic.messages.create({ model, max_tokens: 1024, messages, tools: turn.definitions });
   */
  async forTurn(
    input: string | readonly MessageParam[],
    options: { signal?: AbortSignal } = {},
  ): Promise<Result<{ definitions: AnthropicDefinition[]; selected: ToolsetTool[] | undefined }>> {
    const selected = await this.toolset.selectFor(input, options);
    if (!selected.ok) return selected;
    return {
      ok: true,
      definitions: this.#turn(selected.tools),
      selected: selected.tools,
      requestId: selected.requestId,
    };
  }

  #turn(selected: ToolsetTool[] | undefined): AnthropicDefinition[] {
    if (this.strategy !== 'defer')
      return this.toolset.offeredWith(selected).map((tool) => this.#define(tool));
    // Loaded first, then the rest deferred: Anthropic finds those with its own search.
    const loaded = new Set((selected ?? []).map((tool) => tool.name));
    const rest = this.toolset.tools.filter((tool) => !loaded.has(tool.name));
    return [
      this.#toolSearch,
      ...(selected ?? []).map((tool) => this.#define(tool)),
      ...rest.map((tool) => ({ ...this.#define(tool), defer_loading: true })),
    ];
  }

  #define(tool: OfferedTool): Tool {
    const known = this.#definitions.get(tool.name);
    if (known) return known;
    const converted = this.#strict ? strictSchema(tool.parameters, ANTHROPIC_STRICT) : undefined;
    if (converted?.ok) this.#strictness.set(tool.name, { strict: true });
    else
      this.#strictness.set(tool.name, { strict: false, reason: converted?.reason ?? 'strict mode is off' });
    const schema = converted?.ok ? converted.schema : portableSchema(tool.parameters);
    const definition: Tool = {
      name: tool.name,
      description: tool.description,
      input_schema: { ...schema, type: 'object' },
      ...(converted?.ok ? { strict: true } : {}),
    };
    this.#definitions.set(tool.name, definition);
    return definition;
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
      (block) => block.type === 'tool_use' && this.toolset.definition(block.name) !== undefined,
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
 * Reads the catalog and makes the Anthropic tools of one end user: the whole catalog while it fits
 * `maxTools` (default 128); above it (`strategy: 'auto'`) every tool deferred beside Anthropic's
 * tool search tool (up to 10,000), beyond that toolgate's `search_tools` + `call_tool`. An explicit
 * strategy the catalog does not fit throws, naming the options that narrow it.
 *
 * @example
 * import Anthropic from '@anthropic-ai/sdk';
 * import { createAnthropicTools } from '@toolgate/sdk/anthropic';
 *
 * const loaded = await createAnthropicTools(toolgate, { userId: 'user-42', apps: ['github'] });
 * if (!loaded.ok) throw new Error(failureMessage(loaded));
 * loaded.tools.strategy; // 'defer': 1,223 tools, each defer_loading, beside tool_search_tool_bm25
 * const message = await anthropic.messages.create({ model, max_tokens: 1024, messages, tools: loaded.tools.definitions });
 */
export async function createAnthropicTools(
  toolgate: Toolgate,
  options: AnthropicToolsOptions = {},
): Promise<Result<{ tools: AnthropicTools }>> {
  if (options.toolSearch !== undefined && options.toolSearch !== 'bm25' && options.toolSearch !== 'regex') {
    throw new ToolgateArgumentError("options.toolSearch must be 'bm25' or 'regex'", 'ERR_INVALID_ARG_VALUE');
  }
  const loaded = await loadToolsetFor(toolgate, options, ANTHROPIC_LIMITS);
  if (!loaded.ok) return loaded;
  return {
    ok: true,
    tools: new AnthropicTools(loaded.toolset, options.strict ?? false, options.toolSearch),
    requestId: loaded.requestId,
  };
}
