import { ToolgateArgumentError } from '../assert.ts';

/**
 * How a model reaches the tools:
 * - `all`: each tool is a definition of its own;
 * - `search`: two definitions, `search_tools` and `call_tool` (the names and shapes of toolgate's
 *   MCP search mode), reach every tool of the catalog through a ranked search;
 * - `defer` (Anthropic only): each tool is a definition marked `defer_loading`, beside Anthropic's
 *   tool search tool, which loads the few a task needs.
 */
export type ToolStrategy = 'all' | 'search' | 'defer';

/**
 * The strategy to use, or `auto`: `all` while the tools fit the provider's limit (`maxTools`),
 * above it `search` (Anthropic: `defer` up to its 10,000 deferred tools, then `search`).
 */
export type ToolStrategyOption = 'auto' | ToolStrategy;

/** What a provider accepts in one request. */
export interface ProviderLimits {
  /** The provider's name, for error messages. */
  provider: string;
  /** Tool definitions per request when the caller sets no `maxTools`. */
  maxTools: number;
  /** The most `maxTools` may be (OpenAI refuses more than 128 tools); `undefined`: no ceiling. */
  ceiling?: number;
  /** Tools that may be deferred beside the provider's own tool search; `undefined`: no `defer`. */
  deferMax?: number;
}

/** OpenAI: at most 128 tools per request (Chat Completions and the Responses API). */
export const OPENAI_LIMITS: ProviderLimits = { provider: 'OpenAI', maxTools: 128, ceiling: 128 };

/**
 * Anthropic: the Messages API publishes no count for ordinary tools, and Claude picks worse past a
 * few dozen, so 128 by default, as OpenAI; with tool search, up to 10,000 deferred tools.
 */
export const ANTHROPIC_LIMITS: ProviderLimits = { provider: 'Anthropic', maxTools: 128, deferMax: 10_000 };

/** A framework that is not a provider (the AI SDK, LangChain.js): the model's limit, 128 by default. */
export function frameworkLimits(provider: string): ProviderLimits {
  return { provider, maxTools: 128 };
}

/** The search pair takes two definitions of `maxTools`. */
export const SEARCH_PAIR_SIZE = 2;

/** What the resolution decided, and why, in a sentence for logs. */
export interface StrategyChoice {
  strategy: ToolStrategy;
  reason: string;
}

const count = (tools: number, more: boolean) => (more ? `more than ${tools - 1}` : String(tools));

/**
 * The strategy for a catalog of `tools` tools (`more`: the catalog was read only that far and holds
 * more). An explicit strategy the tools do not fit throws a {@link ToolgateArgumentError} naming the
 * options that fix it: never a silent cut.
 */
export function chooseStrategy(
  asked: ToolStrategyOption,
  tools: number,
  more: boolean,
  maxTools: number,
  limits: ProviderLimits,
): StrategyChoice {
  const held = `the catalog holds ${count(tools, more)} tools`;
  const fitsAll = !more && tools <= maxTools;
  const fitsDefer = limits.deferMax !== undefined && !more && tools <= limits.deferMax;
  if (asked === 'search') return { strategy: 'search', reason: `options.strategy is 'search'; ${held}` };
  if (asked === 'all') {
    if (fitsAll) return { strategy: 'all', reason: `options.strategy is 'all'; ${held}` };
    const others = limits.deferMax === undefined ? `'search'` : `'search' or 'defer'`;
    throw new ToolgateArgumentError(
      `${held}, more than the ${maxTools} tool definitions ${limits.provider} is given per request (options.maxTools): set options.strategy to ${others} (or 'auto'), or narrow the tools with options.query, options.apps or options.tools`,
      'ERR_INVALID_ARG_VALUE',
    );
  }
  if (asked === 'defer') {
    if (fitsDefer) return { strategy: 'defer', reason: `options.strategy is 'defer'; ${held}` };
    throw new ToolgateArgumentError(
      `${held}, more than the ${limits.deferMax ?? 0} deferred tools ${limits.provider}'s tool search takes: set options.strategy to 'search' (or 'auto'), or narrow the tools with options.apps or options.tools`,
      'ERR_INVALID_ARG_VALUE',
    );
  }
  if (fitsAll) return { strategy: 'all', reason: `${held}, within options.maxTools (${maxTools})` };
  if (fitsDefer) {
    return {
      strategy: 'defer',
      reason: `${held}, more than options.maxTools (${maxTools}): deferred beside ${limits.provider}'s tool search`,
    };
  }
  const beyond =
    limits.deferMax === undefined ? `options.maxTools (${maxTools})` : `${limits.deferMax} deferred tools`;
  return {
    strategy: 'search',
    reason: `${held}, more than ${beyond}: search_tools and call_tool reach them`,
  };
}
