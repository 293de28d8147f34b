import { splitToolId } from '../../../shared/ids.ts';
import type { ToolView } from '../../../shared/schemas/agent.ts';
import type { ExecuteResult } from '../agent-calls.ts';
import { assertOptionalSignal, ToolgateArgumentError } from '../assert.ts';
import type { ExecuteWithAuthResult } from '../auth-loop.ts';
import type { Result } from '../results.ts';
import { searchText, type Toolgate } from '../toolgate.ts';
import {
  authorizationLinkOutput,
  authorizationNeededOutput,
  type Called,
  failureOutput,
  type ModelToolOutput,
  refusedOutput,
  successOutput,
} from './model-output.ts';
import { nameAmong } from './names.ts';
import type { ToolsetAuthorization } from './options.ts';
import { portableSchema } from './schemas.ts';
import {
  CALL_TOOL,
  type FoundTool,
  type OfferedTool,
  SEARCH_TOOLS,
  SEARCH_TOOLS_DEFAULT,
  SEARCH_TOOLS_MAX,
  searchPair,
} from './search-pair.ts';
import type { StrategyChoice, ToolStrategy } from './strategy.ts';
import { type ToolSelector, turnOf } from './turn.ts';

/** One tool as a model sees it, and the way back to toolgate. */
export interface ToolsetTool {
  /** The function name: `<appId>__<toolName>`, at most 64 characters (docs/reference.md "MCP"). */
  name: string;
  /** The composite id, `<appId>:::<toolName>`. */
  toolId: string;
  appId: string;
  /** The operation's summary (else its name). */
  title: string;
  description: string;
  /** The JSON Schema of `GET /tools`, unchanged (each adapter converts it for its provider). */
  parameters: Record<string, unknown>;
  requiresUserAuth: boolean;
  scopes: string[];
}

/** The answer of one tool call, ready for any framework. */
export interface ToolCallOutcome {
  /** The name the model called (`call_tool` and `search_tools` included). */
  name: string;
  /** The tool that ran (through `call_tool` too); `undefined` when none did. */
  toolId: string | undefined;
  /** Whether the model should read it as an error (Anthropic `is_error`, LangChain's artifact). */
  isError: boolean;
  /** What the model reads. */
  output: ModelToolOutput;
  /** `output` as JSON text, for tool messages that take a string. */
  text: string;
  /** The SDK's own answer of the tool call, for logs; `undefined` when no tool ran (an unknown name, bad arguments, a search). */
  result: ExecuteWithAuthResult | undefined;
}

/** What a {@link Toolset} is made of; {@link loadToolset} makes it. */
export interface ToolsetInit {
  client: Toolgate;
  /** The tools offered from the start, by name. */
  tools: ReadonlyMap<string, ToolsetTool>;
  userId: string | undefined;
  authorization: ToolsetAuthorization | undefined;
  choice: StrategyChoice;
  /** What the options allow: these apps, these tools (both `undefined`: every tool of the key). */
  apps: readonly string[] | undefined;
  named: readonly string[] | undefined;
  /** The most definitions a provider is given at once. */
  maxTools: number;
  /** Tools a turn's search takes, and the most a turn may offer. */
  turnLimit: number;
  turnMax: number;
  select: ToolSelector | undefined;
}

/** Pending calls kept for their idempotency key (those that met `auth_required` or a lost answer). */
const PENDING_MAX = 1_000;

/**
 * A call that may not have run and whose retry must be the same call: its key is kept for the
 * model's retry with the same arguments, so the server runs it at most once.
 */
const KEEP_KEY: ReadonlySet<string> = new Set([
  'auth_required',
  'auth_timeout',
  'network_error',
  'unexpected_response',
  'idempotency_in_progress',
  'internal_error',
  'rate_limited',
  'aborted',
]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The tools of one end user, named for models and callable by name: the tools offered from the
 * start, those a search found since, and — with the `search` strategy — `search_tools` and
 * `call_tool`. The framework adapters wrap it; use it directly for a framework they do not cover.
 *
 * @example
 * const loaded = await loadToolset(toolgate, { userId: 'user-42', apps: ['github'] });
 * if (loaded.ok) {
 *   const outcome = await loaded.toolset.call('github__issues_list', { owner: 'acme', repo: 'app' });
 *   console.log(outcome.text);
 * }
 */
export class Toolset {
  readonly userId: string | undefined;
  /** How the model reaches the tools: `all`, `search` or `defer` (never `auto`: this is the choice made). */
  readonly strategy: ToolStrategy;
  /** Why that strategy, in one sentence (the catalog's size against the provider's limit). */
  readonly strategyReason: string;
  /** The catalog's tools offered from the start: every one (`all`, `defer`) or none (`search`). */
  readonly tools: readonly ToolsetTool[];
  /** The definitions a model is given by default: `tools`, or with `search` the search pair. */
  readonly offered: readonly OfferedTool[];
  /** The most definitions the provider is given at once (`options.maxTools`, or the provider's). */
  readonly maxTools: number;
  readonly #client: Toolgate;
  readonly #authorization: ToolsetAuthorization | undefined;
  readonly #byName = new Map<string, ToolsetTool>();
  readonly #nameOf = new Map<string, string>();
  readonly #pair: ReadonlyMap<string, OfferedTool>;
  readonly #apps: readonly string[] | undefined;
  readonly #named: ReadonlySet<string> | undefined;
  readonly #turnLimit: number;
  readonly #turnMax: number;
  readonly #select: ToolSelector | undefined;
  /** (user, tool, arguments) → idempotency key, oldest first. */
  readonly #pending = new Map<string, string>();

  constructor(init: ToolsetInit) {
    this.#client = init.client;
    this.userId = init.userId;
    this.#authorization = init.authorization;
    this.strategy = init.choice.strategy;
    this.strategyReason = init.choice.reason;
    for (const tool of init.tools.values()) this.#remember(tool);
    this.tools = [...init.tools.values()];
    this.#apps = init.apps;
    this.#named = init.named && new Set(init.named);
    const scope =
      init.apps || init.named ? [...new Set([...(init.apps ?? []), ...this.#namedApps()])] : undefined;
    const pair = this.strategy === 'search' ? searchPair(scope) : [];
    this.#pair = new Map(pair.map((tool) => [tool.name, tool]));
    this.offered = this.strategy === 'search' ? pair : this.tools;
    this.maxTools = init.maxTools;
    this.#turnLimit = init.turnLimit;
    this.#turnMax = init.turnMax;
    this.#select = init.select;
  }

  /** The catalog tool behind a function name (offered from the start, or found by a search since). */
  get(name: string): ToolsetTool | undefined {
    return this.#byName.get(name);
  }

  /** The composite id behind a function name. @example toolset.toolId('github__issues_list') // 'github:::issues_list' */
  toolId(name: string): string | undefined {
    return this.#byName.get(name)?.toolId;
  }

  /** The definition behind a name a model may call: a catalog tool, or `search_tools`/`call_tool`. */
  definition(name: string): OfferedTool | undefined {
    return this.#pair.get(name) ?? this.#byName.get(name);
  }

  /**
   * The definitions of a turn: the tools selected for it, and with the `search` strategy the search
   * pair besides (to reach what the selection missed). No selection (`undefined`, or nothing found):
   * {@link offered}, never an empty list (which providers refuse).
   */
  offeredWith(selected: readonly ToolsetTool[] | undefined): OfferedTool[] {
    if (!selected?.length) return [...this.offered];
    return [...selected, ...this.#pair.values()];
  }

  /**
   * The best tools for a task, within what the options allow, named and callable from now on.
   * `apps` narrows further.
   *
   * @example
   * const found = await toolset.search('archive a zeppelin', { limit: 3 });
   * if (found.ok) for (const tool of found.tools) await toolset.call(tool.name, { id: 'z-1' });
   */
  async search(
    text: string,
    options: { apps?: readonly string[]; limit?: number; signal?: AbortSignal } = {},
  ): Promise<Result<{ tools: ToolsetTool[] }>> {
    const allowed =
      this.#apps || this.#named ? new Set([...(this.#apps ?? []), ...this.#namedApps()]) : undefined;
    const apps = options.apps
      ? options.apps.filter((app) => !allowed || allowed.has(app))
      : allowed && [...allowed];
    const found = await this.#client.searchTools(text, {
      ...(apps ? { apps: [...apps] } : {}),
      ...(options.limit !== undefined ? { limit: options.limit } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (!found.ok) return found;
    const tools: ToolsetTool[] = [];
    for (const view of found.tools)
      if (this.#allows(view.appId, view.toolId)) tools.push(await this.#adopt(view));
    return { ok: true, tools, requestId: found.requestId };
  }

  /**
   * The tools of one turn (the per-turn selection): `options.select` of the turn, or a search for
   * its text. `tools: undefined` when there is nothing to select by (no text, or `select` answered
   * `undefined`): the turn keeps {@link offered}.
   *
   * @example
   * const turn = await toolset.selectFor(messages); // the last user message is searched
   * if (turn.ok) defineForMyFramework(toolset.offeredWith(turn.tools));
   */
  async selectFor(
    input: string | readonly unknown[],
    options: { signal?: AbortSignal } = {},
  ): Promise<Result<{ tools: ToolsetTool[] | undefined }>> {
    assertOptionalSignal(options.signal, 'options.signal');
    const turn = turnOf(input);
    const chosen = this.#select ? await this.#select(turn) : turn.text;
    if (chosen === undefined) return { ok: true, tools: undefined, requestId: undefined };
    if (typeof chosen === 'string') {
      if (searchText(chosen) === '') return { ok: true, tools: undefined, requestId: undefined };
      return this.search(chosen, { limit: this.#turnLimit, ...options });
    }
    if (!Array.isArray(chosen) || chosen.some((view) => !isRecord(view) || typeof view.toolId !== 'string')) {
      throw new ToolgateArgumentError(
        'options.select must answer a search text, tools (as searchTools or listTools answer them) or undefined',
        'ERR_INVALID_ARG_TYPE',
      );
    }
    if (chosen.length > this.#turnMax) {
      throw new ToolgateArgumentError(
        `options.select answered ${chosen.length} tools, more than the ${this.#turnMax} a turn may offer (options.maxTools${this.strategy === 'search' ? ', less the search pair' : ''})`,
        'ERR_INVALID_ARG_VALUE',
      );
    }
    const tools: ToolsetTool[] = [];
    for (const view of chosen) tools.push(await this.#adopt(view));
    return { ok: true, tools, requestId: undefined };
  }

  /**
   * Runs the tool the model called by `name` with its arguments, for the toolset's user, and
   * answers what the model should read. Never throws for a failure of the call: an unknown name,
   * arguments that are not an object, `auth_required` or an upstream error all become an output
   * the model can act on. With the `search` strategy, `search_tools` and `call_tool` are answered
   * too: `call_tool` answers exactly what the tool called by its own name would.
   *
   * Every call carries an idempotency key. A call that met `auth_required` (or lost its answer)
   * keeps its key, and the model's retry of the same tool with the same arguments reuses it: the
   * server runs it at most once.
   */
  async call(name: string, input: unknown, options: { signal?: AbortSignal } = {}): Promise<ToolCallOutcome> {
    assertOptionalSignal(options.signal, 'options.signal');
    if (this.#pair.has(name)) {
      return name === SEARCH_TOOLS
        ? this.#searchTools(input, options.signal)
        : this.#callTool(input, options.signal);
    }
    const tool = this.#byName.get(name);
    if (!tool) {
      const hint =
        this.strategy === 'search'
          ? ` Find tools with ${SEARCH_TOOLS}, then run them with ${CALL_TOOL}.`
          : '';
      return outcome(
        name,
        undefined,
        refusedOutput(
          'tool_not_found',
          `There is no tool named ${name}; call one of the tools offered.${hint}`,
        ),
      );
    }
    if (!isRecord(input)) {
      return outcome(
        name,
        tool.toolId,
        refusedOutput('invalid_parameters', `The arguments of ${name} must be a JSON object.`),
      );
    }
    return this.#run(name, { name, appId: tool.appId }, tool.toolId, input, options.signal);
  }

  async #searchTools(input: unknown, signal: AbortSignal | undefined): Promise<ToolCallOutcome> {
    const refuse = (message: string) =>
      outcome(SEARCH_TOOLS, undefined, refusedOutput('invalid_parameters', message));
    if (!isRecord(input) || typeof input.query !== 'string' || input.query.trim() === '') {
      return refuse(`${SEARCH_TOOLS} needs a query: the task, in words.`);
    }
    const { apps = null, limit = null } = input;
    if (apps !== null && (!Array.isArray(apps) || apps.some((app) => typeof app !== 'string'))) {
      return refuse(`apps of ${SEARCH_TOOLS} must be a list of app ids.`);
    }
    if (
      limit !== null &&
      (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > SEARCH_TOOLS_MAX)
    ) {
      return refuse(`limit of ${SEARCH_TOOLS} must be a whole number from 1 to ${SEARCH_TOOLS_MAX}.`);
    }
    const found = await this.search(input.query, {
      ...(apps !== null ? { apps: apps as string[] } : {}),
      limit: (limit as number | null) ?? SEARCH_TOOLS_DEFAULT,
      ...(signal ? { signal } : {}),
    });
    if (!found.ok)
      return outcome(
        SEARCH_TOOLS,
        undefined,
        failureOutput({ name: SEARCH_TOOLS, appId: 'toolgate' }, found),
      );
    const tools: FoundTool[] = found.tools.map((tool) => ({
      name: tool.name,
      toolId: tool.toolId,
      title: tool.title,
      description: tool.description,
      inputSchema: portableSchema(tool.parameters),
      requiresUserAuth: tool.requiresUserAuth,
    }));
    return outcome(SEARCH_TOOLS, undefined, successOutput({ tools }));
  }

  async #callTool(input: unknown, signal: AbortSignal | undefined): Promise<ToolCallOutcome> {
    const refuse = (error: 'tool_not_found' | 'invalid_parameters', message: string, toolId?: string) =>
      outcome(CALL_TOOL, toolId, refusedOutput(error, message));
    if (!isRecord(input) || typeof input.name !== 'string' || input.name === '') {
      return refuse(
        'invalid_parameters',
        `${CALL_TOOL} needs the name of a tool that ${SEARCH_TOOLS} found.`,
      );
    }
    const { name } = input;
    const split = splitToolId(name);
    const tool =
      this.#byName.get(name) ??
      this.#byName.get(this.#nameOf.get(name) ?? '') ??
      (split && this.#allows(split.appId, name) ? { name, toolId: name, appId: split.appId } : undefined);
    if (!tool) {
      return refuse(
        'tool_not_found',
        `There is no tool named ${name} among those found; find it with ${SEARCH_TOOLS}, then call ${CALL_TOOL} with the name it answers.`,
      );
    }
    // Required, as the definition says: a misnamed key (`args`) must not run the tool with none.
    if (input.arguments === undefined) {
      return refuse(
        'invalid_parameters',
        `${CALL_TOOL} needs the arguments of ${tool.name}: a JSON object ({} when it takes none).`,
        tool.toolId,
      );
    }
    const parameters = input.arguments;
    if (!isRecord(parameters)) {
      return refuse(
        'invalid_parameters',
        `The arguments of ${tool.name} (arguments of ${CALL_TOOL}) must be a JSON object.`,
        tool.toolId,
      );
    }
    return this.#run(
      CALL_TOOL,
      { name: tool.name, appId: tool.appId, via: CALL_TOOL },
      tool.toolId,
      parameters,
      signal,
    );
  }

  async #run(
    calledAs: string,
    called: Called,
    toolId: string,
    parameters: Record<string, unknown>,
    signal: AbortSignal | undefined,
  ): Promise<ToolCallOutcome> {
    const pendingId = JSON.stringify([this.userId ?? null, toolId, canonical(parameters)]);
    const idempotencyKey = this.#pending.get(pendingId) ?? crypto.randomUUID();
    const authorization = this.#authorization;
    const common = {
      idempotencyKey,
      ...(this.userId !== undefined ? { userId: this.userId } : {}),
      ...(signal ? { signal } : {}),
    };
    const result: ExecuteWithAuthResult = authorization?.wait
      ? await this.#client.executeWithAuth(toolId, parameters, {
          ...authorization.wait,
          clientRedirectUri: authorization.clientRedirectUri,
          ...common,
        })
      : await this.#client.execute(toolId, parameters, { retries: 2, ...common });
    this.#pending.delete(pendingId);
    if (!result.ok && KEEP_KEY.has(result.error)) {
      this.#pending.set(pendingId, idempotencyKey);
      if (this.#pending.size > PENDING_MAX) this.#pending.delete(this.#pending.keys().next().value as string);
    }
    if (result.ok) return outcome(calledAs, toolId, successOutput(result.data), result);
    if (result.error !== 'auth_required')
      return outcome(calledAs, toolId, failureOutput(called, result), result);

    const reauth = result.body.reauth_required === true;
    if (!authorization) {
      return outcome(calledAs, toolId, authorizationNeededOutput(called, reauth, undefined), result);
    }
    const start = await this.#client.initiateOAuth({
      appId: result.body.app_id,
      clientRedirectUri: authorization.clientRedirectUri,
      ...(this.userId !== undefined ? { userId: this.userId } : {}),
      ...(signal ? { signal } : {}),
    });
    const output = start.ok
      ? authorizationLinkOutput(called, reauth, start)
      : authorizationNeededOutput(called, reauth, start);
    return outcome(calledAs, toolId, output, result);
  }

  /** Whether the options allow a tool: of an app asked for, or named (neither given: every tool). */
  #allows(appId: string, toolId: string): boolean {
    if (!this.#apps && !this.#named) return true;
    return this.#apps?.includes(appId) === true || this.#named?.has(toolId) === true;
  }

  #namedApps(): string[] {
    return [...(this.#named ?? [])].map((id) => splitToolId(id)?.appId ?? '');
  }

  /** A tool found by a search, under the name it already has, or a new one that no other tool has. */
  async #adopt(view: ToolView): Promise<ToolsetTool> {
    const known = this.#nameOf.get(view.toolId);
    const existing = known === undefined ? undefined : this.#byName.get(known);
    if (existing) return existing;
    const taken = new Map([...this.#byName].map(([name, tool]) => [name, tool.toolId]));
    const tool = toolOf(await nameAmong(taken, view), view);
    this.#remember(tool);
    return tool;
  }

  #remember(tool: ToolsetTool): void {
    this.#byName.set(tool.name, tool);
    this.#nameOf.set(tool.toolId, tool.name);
  }
}

/** A catalog entry as a model's tool. */
export function toolOf(name: string, view: ToolView): ToolsetTool {
  return {
    name,
    toolId: view.toolId,
    appId: view.appId,
    title: view.title ?? view.name,
    description: view.description,
    parameters: view.parameters,
    requiresUserAuth: view.requiresUserAuth,
    scopes: view.scopes,
  };
}

function outcome(
  name: string,
  toolId: string | undefined,
  output: ModelToolOutput,
  result?: ExecuteWithAuthResult | ExecuteResult,
): ToolCallOutcome {
  return { name, toolId, isError: !output.ok, output, text: JSON.stringify(output), result };
}

/** JSON with object keys sorted, so equal arguments give one text whatever their order. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
  );
}
