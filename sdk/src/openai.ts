/**
 * `@toolgate/sdk/openai`: toolgate's tools as OpenAI function definitions, for Chat Completions
 * and the Responses API, and `handleToolCalls` to run the calls of a response and answer them.
 * Uses the `openai` package (an optional peer) for its types only: nothing of it runs here.
 *
 * @packageDocumentation
 */
import type {
  ChatCompletion,
  ChatCompletionFunctionTool,
  ChatCompletionMessage,
  ChatCompletionMessageParam,
  ChatCompletionToolMessageParam,
} from 'openai/resources/chat/completions';
import type {
  FunctionTool,
  Response,
  ResponseInput,
  ResponseInputItem,
} from 'openai/resources/responses/responses';
import { loadToolsetFor } from './adapters/load.ts';
import type { ToolsetOptions } from './adapters/options.ts';
import { dropOptionalNulls, OPENAI_STRICT, portableSchema, strictSchema } from './adapters/schemas.ts';
import type { OfferedTool } from './adapters/search-pair.ts';
import { OPENAI_LIMITS, type ToolStrategy } from './adapters/strategy.ts';
import type { ToolCallOutcome, Toolset, ToolsetTool } from './adapters/toolset.ts';
import type { Result } from './results.ts';
import type { Toolgate } from './toolgate.ts';

export type { ModelToolOutput } from './adapters/model-output.ts';
export type { ToolsetAuthorization, ToolsetOptions } from './adapters/options.ts';
export type { OfferedTool } from './adapters/search-pair.ts';
export type { ToolStrategy } from './adapters/strategy.ts';
export type { ToolCallOutcome, Toolset, ToolsetTool } from './adapters/toolset.ts';
export type { ToolSelector, Turn } from './adapters/turn.ts';

export interface OpenAIToolsOptions extends ToolsetOptions {
  /**
   * Structured Outputs for the arguments (default `true`): each tool whose schema strict mode can
   * express is sent with `strict: true` (objects closed, every property required, optional ones
   * nullable; the `null`s are removed again before the call). A tool it cannot express (a free-form
   * object, a map, `allOf`, `not`, …) is sent without strict mode; `strictness` says which and why.
   */
  strict?: boolean;
}

/** Options of one `handleToolCalls`. */
export interface HandleToolCallsOptions {
  signal?: AbortSignal;
  /** Called after each call with its whole outcome (logs, metrics, a link to show in a UI). */
  onToolCall?: (outcome: ToolCallOutcome) => void;
}

interface FunctionCall {
  id: string;
  name: string;
  arguments: string;
}

/** One turn's definitions for both APIs (`forTurn`). */
export interface OpenAITurnTools {
  /** `tools` of this turn's `chat.completions.create`. */
  chatCompletions: ChatCompletionFunctionTool[];
  /** `tools` of this turn's `responses.create`. */
  responses: FunctionTool[];
  /** The tools selected for the turn; `undefined` when nothing was selected (the default definitions). */
  selected: ToolsetTool[] | undefined;
}

interface Definition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  strict: boolean;
}

/**
 * The tools for OpenAI: definitions for both APIs and the handler of their calls. Never more than
 * 128 definitions (OpenAI's limit per request, or `maxTools`): a larger catalog is offered as
 * `search_tools` + `call_tool` (`strategy: 'search'`), or a turn's own selection (`forTurn`).
 *
 * @example
 * const completion = await openai.chat.completions.create({ model, messages, tools: tools.chatCompletions });
 * messages.push(completion.choices[0].message, ...(await tools.handleToolCalls(completion)));
 */
export class OpenAITools {
  readonly toolset: Toolset;
  /** How the model reaches the tools: `all` (a definition each) or `search` (the search pair). */
  readonly strategy: ToolStrategy;
  /** `tools` of `chat.completions.create`. */
  readonly chatCompletions: ChatCompletionFunctionTool[];
  /** `tools` of `responses.create`. */
  readonly responses: FunctionTool[];
  /** Function name → whether it is sent strict, or why not (each tool defined so far). */
  readonly strictness: ReadonlyMap<string, { strict: true } | { strict: false; reason: string }>;
  readonly #strictness = new Map<string, { strict: true } | { strict: false; reason: string }>();
  readonly #definitions = new Map<string, Definition>();
  readonly #strict: boolean;

  constructor(toolset: Toolset, strict: boolean) {
    this.toolset = toolset;
    this.strategy = toolset.strategy;
    this.strictness = this.#strictness;
    this.#strict = strict;
    const definitions = toolset.offered.map((tool) => this.#define(tool));
    this.chatCompletions = definitions.map(chatTool);
    this.responses = definitions.map(responsesTool);
  }

  /**
   * The definitions of one turn: the tools that fit its text (the last user message; see
   * `select` and `limit`), and with the `search` strategy `search_tools` + `call_tool` besides.
   * Without a selection (no text, or nothing found) the default definitions. Calls of every tool offered so far are
   * answered by `handleToolCalls`.
   *
   * @example
   * const turn = await tools.forTurn(messages);
   * if (!turn.ok) throw new Error(failureMessage(turn));
   * const completion = await openai.chat.completions.create({ model, messages, tools: turn.chatCompletions });
   */
  async forTurn(
    input: string | readonly ChatCompletionMessageParam[] | ResponseInput,
    options: { signal?: AbortSignal } = {},
  ): Promise<Result<OpenAITurnTools>> {
    const selected = await this.toolset.selectFor(input, options);
    if (!selected.ok) return selected;
    const definitions = this.toolset.offeredWith(selected.tools).map((tool) => this.#define(tool));
    return {
      ok: true,
      chatCompletions: definitions.map(chatTool),
      responses: definitions.map(responsesTool),
      selected: selected.tools,
      requestId: selected.requestId,
    };
  }

  #define(tool: OfferedTool): Definition {
    const known = this.#definitions.get(tool.name);
    if (known) return known;
    const converted = this.#strict ? strictSchema(tool.parameters, OPENAI_STRICT) : undefined;
    if (converted?.ok) this.#strictness.set(tool.name, { strict: true });
    else
      this.#strictness.set(tool.name, { strict: false, reason: converted?.reason ?? 'strict mode is off' });
    const definition = {
      name: tool.name,
      description: tool.description,
      parameters: converted?.ok ? converted.schema : portableSchema(tool.parameters),
      strict: converted?.ok === true,
    };
    this.#definitions.set(tool.name, definition);
    return definition;
  }

  /**
   * Runs the function calls of a Chat Completions answer (the `ChatCompletion` or its message) and
   * answers one `tool` message per call, in order, to append after the assistant message. Calls of
   * functions that are not toolgate's (your own tools) are left to you: no message for them.
   */
  handleToolCalls(
    response: ChatCompletion | ChatCompletionMessage,
    options?: HandleToolCallsOptions,
  ): Promise<ChatCompletionToolMessageParam[]>;
  /**
   * Runs the `function_call` items of a Responses API answer and answers one
   * `function_call_output` item per call, to send as `input` of the next request (with
   * `previous_response_id`, or after the response's `output`).
   */
  handleToolCalls(
    response: Response,
    options?: HandleToolCallsOptions,
  ): Promise<ResponseInputItem.FunctionCallOutput[]>;
  async handleToolCalls(
    response: ChatCompletion | ChatCompletionMessage | Response,
    options: HandleToolCallsOptions = {},
  ): Promise<ChatCompletionToolMessageParam[] | ResponseInputItem.FunctionCallOutput[]> {
    if ('object' in response && response.object === 'response') {
      const calls = response.output
        .filter((item) => item.type === 'function_call')
        .map((item) => ({ id: item.call_id, name: item.name, arguments: item.arguments }));
      const outcomes = await this.#run(calls, options);
      return outcomes.map(({ call, outcome }) => ({
        type: 'function_call_output' as const,
        call_id: call.id,
        output: outcome.text,
      }));
    }
    const message = 'choices' in response ? response.choices[0]?.message : response;
    const calls = (message?.tool_calls ?? [])
      .filter((call) => call.type === 'function')
      .map((call) => ({ id: call.id, name: call.function.name, arguments: call.function.arguments }));
    const outcomes = await this.#run(calls, options);
    return outcomes.map(({ call, outcome }) => ({
      role: 'tool' as const,
      tool_call_id: call.id,
      content: outcome.text,
    }));
  }

  /** The calls of toolgate's tools, run side by side (a model asks for parallel calls at once). */
  async #run(
    calls: FunctionCall[],
    options: HandleToolCallsOptions,
  ): Promise<Array<{ call: FunctionCall; outcome: ToolCallOutcome }>> {
    const ours = calls.filter((call) => this.toolset.definition(call.name) !== undefined);
    return Promise.all(
      ours.map(async (call) => {
        const tool = this.toolset.definition(call.name) as OfferedTool;
        const outcome = await this.toolset.call(
          call.name,
          this.#arguments(tool, call.arguments),
          options.signal ? { signal: options.signal } : {},
        );
        options.onToolCall?.(outcome);
        return { call, outcome };
      }),
    );
  }

  /** The model's JSON arguments; text that is not JSON goes on as is and is refused as not an object. */
  #arguments(tool: OfferedTool, text: string): unknown {
    let parsed: unknown;
    try {
      parsed = text.trim() === '' ? {} : JSON.parse(text);
    } catch {
      return text;
    }
    return this.#definitions.get(tool.name)?.strict === true
      ? dropOptionalNulls(tool.parameters, parsed)
      : parsed;
  }
}

function chatTool(definition: Definition): ChatCompletionFunctionTool {
  return { type: 'function', function: { ...definition } };
}

function responsesTool(definition: Definition): FunctionTool {
  return { type: 'function', ...definition };
}

/**
 * Reads the catalog and makes the OpenAI tools of one end user, within OpenAI's 128 tools per
 * request: the whole catalog while it fits, else `search_tools` + `call_tool` (`strategy: 'auto'`);
 * `strategy: 'all'` over the limit throws, naming the options that narrow it. `query` offers the
 * best tools for one task instead; `forTurn` selects them turn by turn.
 *
 * @example
 * import OpenAI from 'openai';
 * import { createOpenAITools } from '@toolgate/sdk/openai';
 *
 * const loaded = await createOpenAITools(toolgate, {
 *   userId: 'user-42',
 *   apps: ['github'], // 1,223 tools: search_tools + call_tool
 *   authorization: { clientRedirectUri: 'https://agent.example/oauth/done' },
 * });
 * if (!loaded.ok) throw new Error(failureMessage(loaded));
 * const response = await openai.responses.create({ model: 'gpt-5', input, tools: loaded.tools.responses });
 * const outputs = await loaded.tools.handleToolCalls(response);
 */
export async function createOpenAITools(
  toolgate: Toolgate,
  options: OpenAIToolsOptions = {},
): Promise<Result<{ tools: OpenAITools }>> {
  const loaded = await loadToolsetFor(toolgate, options, OPENAI_LIMITS);
  if (!loaded.ok) return loaded;
  return {
    ok: true,
    tools: new OpenAITools(loaded.toolset, options.strict ?? true),
    requestId: loaded.requestId,
  };
}
