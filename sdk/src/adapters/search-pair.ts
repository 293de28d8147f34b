/**
 * The search pair: two tools through which a model reaches a catalog of any size, with the names,
 * inputs and answers of toolgate's MCP search mode (docs/reference.md "Finding the right tool"),
 * so that a model meets one vocabulary over MCP and through every adapter.
 */

/** A definition the adapters offer a model: a tool of the catalog, or one of the search pair. */
export interface OfferedTool {
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}

export const SEARCH_TOOLS = 'search_tools';
export const CALL_TOOL = 'call_tool';

/** Tools `search_tools` answers when the model names no `limit`, and the most it may ask for. */
export const SEARCH_TOOLS_DEFAULT = 8;
export const SEARCH_TOOLS_MAX = 20;

/** One tool found by `search_tools`: what the model needs to call it through `call_tool`. */
export interface FoundTool {
  /** The name to give `call_tool` (`<appId>__<toolName>`, the MCP name). */
  name: string;
  toolId: string;
  title: string;
  description: string;
  /** JSON Schema of the `arguments` of `call_tool`. */
  inputSchema: Record<string, unknown>;
  requiresUserAuth: boolean;
}

/** The two definitions; `apps` (when the toolset is narrowed to them) is named in the description. */
export function searchPair(apps: readonly string[] | undefined): [OfferedTool, OfferedTool] {
  const scope = apps?.length ? ` Tools of: ${apps.join(', ')}.` : '';
  return [
    {
      name: SEARCH_TOOLS,
      description: `Find the tools that can do a task, best match first. Describe the task in plain words ("open an issue in a repository", "refund a payment"); each tool found comes with its name and the JSON Schema of its arguments. Then run it with ${CALL_TOOL}.${scope}`,
      parameters: {
        type: 'object',
        properties: {
          query: { type: 'string', description: 'The task, in words.' },
          apps: {
            type: 'array',
            items: { type: 'string' },
            description: 'Only the tools of these apps (app ids).',
          },
          limit: {
            type: 'integer',
            minimum: 1,
            maximum: SEARCH_TOOLS_MAX,
            description: `How many tools to answer (default ${SEARCH_TOOLS_DEFAULT}).`,
          },
        },
        required: ['query'],
        additionalProperties: false,
      },
    },
    {
      name: CALL_TOOL,
      description: `Run a tool that ${SEARCH_TOOLS} found: its name, and arguments that follow its inputSchema. The answer is the tool's own.`,
      parameters: {
        type: 'object',
        properties: {
          name: {
            type: 'string',
            description: `The tool's name as ${SEARCH_TOOLS} answered it (or its toolId).`,
          },
          arguments: { type: 'object', description: "The tool's arguments, following its inputSchema." },
        },
        required: ['name', 'arguments'],
        additionalProperties: false,
      },
    },
  ];
}

export function isPairName(name: string): boolean {
  return name === SEARCH_TOOLS || name === CALL_TOOL;
}
