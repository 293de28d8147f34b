import type { ToolView } from '../../../shared/schemas/agent.ts';

/**
 * One turn of a conversation, as a per-turn selection sees it: the task in words and the messages
 * it came from.
 */
export interface Turn {
  /**
   * The last user message's text, and the text the assistant wrote after it, if any (what the
   * model said it would do next): what the default selection searches for.
   */
  text: string;
  /** The conversation as the framework holds it (its own message type). */
  messages: readonly unknown[];
}

/**
 * A per-turn selection: from a turn to a search text (the best tools for it are offered), to the
 * tools themselves (from your own `toolgate.searchTools` or `listTools`), or to `undefined` (this
 * turn keeps the tools the adapter offers by default).
 *
 * @example
 * // Search for the user's words, with the product's name the user never says.
 * const select = (turn: Turn) => `${turn.text} github`;
 */
export type ToolSelector = (
  turn: Turn,
) => string | readonly ToolView[] | undefined | Promise<string | readonly ToolView[] | undefined>;

type Role = 'user' | 'assistant' | 'other';

/** The role of a message of the AI SDK, OpenAI, Anthropic or LangChain.js. */
function roleOf(message: unknown): Role {
  if (typeof message !== 'object' || message === null) return 'other';
  const { role } = message as { role?: unknown };
  if (role === 'user') return 'user';
  if (role === 'assistant') return 'assistant';
  // LangChain.js messages are classes: `human` and `ai` by their type.
  const typed = message as { getType?: () => unknown; _getType?: () => unknown; type?: unknown };
  const type =
    typeof typed.getType === 'function'
      ? typed.getType()
      : typeof typed._getType === 'function'
        ? typed._getType()
        : typed.type;
  if (type === 'human') return 'user';
  if (type === 'ai') return 'assistant';
  return 'other';
}

/** The text parts of a message's content: a string, or parts of type text/input_text/output_text. */
function textOf(message: unknown): string {
  const content = (message as { content?: unknown }).content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => {
      if (typeof part === 'string') return part;
      const { type, text } = (part ?? {}) as { type?: unknown; text?: unknown };
      return (type === 'text' || type === 'input_text' || type === 'output_text') && typeof text === 'string'
        ? text
        : '';
    })
    .filter(Boolean)
    .join(' ');
}

/**
 * The turn of a conversation: the last user message with text (a user message holding only tool
 * results does not count), and the last assistant text after it. A bare string is the turn's text.
 */
export function turnOf(input: string | readonly unknown[]): Turn {
  if (typeof input === 'string') return { text: input, messages: [{ role: 'user', content: input }] };
  let assistant = '';
  for (let index = input.length - 1; index >= 0; index -= 1) {
    const message = input[index];
    const role = roleOf(message);
    const text = role === 'other' ? '' : textOf(message).trim();
    if (text === '') continue;
    if (role === 'assistant') {
      assistant ||= text;
      continue;
    }
    return { text: assistant ? `${text}\n${assistant}` : text, messages: input };
  }
  return { text: assistant, messages: input };
}
