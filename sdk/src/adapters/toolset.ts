import { splitToolId } from '../../../shared/ids.ts';
import type { ToolView } from '../../../shared/schemas/agent.ts';
import type { ExecuteResult } from '../agent-calls.ts';
import {
  assertFunction,
  assertObject,
  assertOptionalMs,
  assertOptionalSignal,
  assertOptionalString,
  assertString,
  ToolgateArgumentError,
} from '../assert.ts';
import type { ExecuteWithAuthOptions, ExecuteWithAuthResult } from '../auth-loop.ts';
import type { Failure, Result } from '../results.ts';
import { LIST_TOOLS_MAX_LIMIT, type Toolgate } from '../toolgate.ts';
import {
  authorizationLinkOutput,
  authorizationNeededOutput,
  failureOutput,
  type ModelToolOutput,
  refusedOutput,
  successOutput,
} from './model-output.ts';
import { nameTools } from './names.ts';

/** What the tools do when the end user has not authorized an app (`auth_required`). */
export interface ToolsetAuthorization {
  /** Registered on the client: where toolgate sends the user's browser after the provider. */
  clientRedirectUri: string;
  /**
   * Without `wait` (the default) the tool answers the model at once with an authorization link
   * to show the user (`POST /initiateOAuth`), and the model calls the tool again once they have
   * connected. With `wait` the tool call itself waits: `executeWithAuth` hands the link to
   * `onAuthorizationUrl`, polls until the connection is active, and runs the tool.
   */
  wait?: Pick<
    ExecuteWithAuthOptions,
    'onAuthorizationUrl' | 'timeoutMs' | 'pollIntervalMs' | 'maxPollIntervalMs' | 'onProgress'
  >;
}

/** Options every adapter (`/ai`, `/openai`, `/anthropic`, `/langchain`) shares. */
export interface ToolsetOptions {
  /** The end user the tools act for (`X-Service-User-Id`); defaults to the client's `userId`. */
  userId?: string;
  /** Only the tools of these apps. */
  apps?: string[];
  /** Only these tools, by composite id (`github:::issues_create`); with `apps`, both sets. */
  tools?: string[];
  /** Catalog search (`GET /tools?q=`): words that must all occur in a tool's name or description. */
  q?: string;
  /** At most this many tools (OpenAI takes 128 per request). */
  limit?: number;
  /** Tools per `GET /tools` request, 1–1000 (default 1000); every page is read. */
  pageSize?: number;
  /** `auth_required` handling; without it the model is told the user must connect the app first. */
  authorization?: ToolsetAuthorization;
  /** Aborts loading the catalog. */
  signal?: AbortSignal;
}

/** One tool as a model sees it, and the way back to toolgate. */
export interface ToolsetTool {
  /** The function name: `<appId>__<toolName>`, at most 64 characters (docs/reference.md "MCP"). */
  name: string;
  /** The composite id, `<appId>:::<toolName>`. */
  toolId: string;
  appId: string;
  description: string;
  /** The JSON Schema of `GET /tools`, unchanged (each adapter converts it for its provider). */
  parameters: Record<string, unknown>;
  requiresUserAuth: boolean;
  scopes: string[];
}

/** The answer of one tool call, ready for any framework. */
export interface ToolCallOutcome {
  /** The name the model called. */
  name: string;
  /** The tool it maps to; `undefined` for a name that is not in the toolset. */
  toolId: string | undefined;
  /** Whether the model should read it as an error (Anthropic `is_error`, LangChain's artifact). */
  isError: boolean;
  /** What the model reads. */
  output: ModelToolOutput;
  /** `output` as JSON text, for tool messages that take a string. */
  text: string;
  /** The SDK's own answer, for logs; `undefined` when no call was made (unknown name, bad arguments). */
  result: ExecuteWithAuthResult | undefined;
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

/**
 * The tools of one end user, read from the catalog, named for models and callable by name. The
 * framework adapters wrap it; use it directly for a framework they do not cover.
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
  readonly tools: readonly ToolsetTool[];
  readonly #byName: ReadonlyMap<string, ToolsetTool>;
  readonly #client: Toolgate;
  readonly #authorization: ToolsetAuthorization | undefined;
  /** (user, tool, arguments) → idempotency key, oldest first. */
  readonly #pending = new Map<string, string>();

  constructor(
    client: Toolgate,
    tools: ReadonlyMap<string, ToolsetTool>,
    userId: string | undefined,
    authorization: ToolsetAuthorization | undefined,
  ) {
    this.#client = client;
    this.#byName = tools;
    this.tools = [...tools.values()];
    this.userId = userId;
    this.#authorization = authorization;
  }

  /** The tool behind a function name. */
  get(name: string): ToolsetTool | undefined {
    return this.#byName.get(name);
  }

  /** The composite id behind a function name. @example toolset.toolId('github__issues_list') // 'github:::issues_list' */
  toolId(name: string): string | undefined {
    return this.#byName.get(name)?.toolId;
  }

  /**
   * Runs the tool the model called by `name` with its arguments, for the toolset's user, and
   * answers what the model should read. Never throws for a failure of the call: an unknown name,
   * arguments that are not an object, `auth_required` or an upstream error all become an output
   * the model can act on.
   *
   * Every call carries an idempotency key. A call that met `auth_required` (or lost its answer)
   * keeps its key, and the model's retry of the same tool with the same arguments reuses it: the
   * server runs it at most once.
   */
  async call(name: string, input: unknown, options: { signal?: AbortSignal } = {}): Promise<ToolCallOutcome> {
    assertOptionalSignal(options.signal, 'options.signal');
    const tool = this.#byName.get(name);
    if (!tool) {
      return outcome(
        name,
        undefined,
        refusedOutput('tool_not_found', `There is no tool named ${name}; call one of the tools offered.`),
      );
    }
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      return outcome(
        name,
        tool.toolId,
        refusedOutput('invalid_parameters', `The arguments of ${name} must be a JSON object.`),
      );
    }
    const parameters = input as Record<string, unknown>;
    const pendingId = JSON.stringify([this.userId ?? null, tool.toolId, canonical(parameters)]);
    const idempotencyKey = this.#pending.get(pendingId) ?? crypto.randomUUID();
    const { signal } = options;
    const authorization = this.#authorization;
    const common = {
      idempotencyKey,
      ...(this.userId !== undefined ? { userId: this.userId } : {}),
      ...(signal ? { signal } : {}),
    };
    const result: ExecuteWithAuthResult = authorization?.wait
      ? await this.#client.executeWithAuth(tool.toolId, parameters, {
          ...authorization.wait,
          clientRedirectUri: authorization.clientRedirectUri,
          ...common,
        })
      : await this.#client.execute(tool.toolId, parameters, { retries: 2, ...common });
    this.#pending.delete(pendingId);
    if (!result.ok && KEEP_KEY.has(result.error)) {
      this.#pending.set(pendingId, idempotencyKey);
      if (this.#pending.size > PENDING_MAX) this.#pending.delete(this.#pending.keys().next().value as string);
    }
    const called = { name, appId: tool.appId };
    if (result.ok) return outcome(name, tool.toolId, successOutput(result.data), result);
    if (result.error !== 'auth_required')
      return outcome(name, tool.toolId, failureOutput(called, result), result);

    const reauth = result.body.reauth_required === true;
    if (!this.#authorization) {
      return outcome(name, tool.toolId, authorizationNeededOutput(called, reauth, undefined), result);
    }
    const start = await this.#client.initiateOAuth({
      appId: result.body.app_id,
      clientRedirectUri: this.#authorization.clientRedirectUri,
      ...(this.userId !== undefined ? { userId: this.userId } : {}),
      ...(signal ? { signal } : {}),
    });
    const output = start.ok
      ? authorizationLinkOutput(called, reauth, start)
      : authorizationNeededOutput(called, reauth, start);
    return outcome(name, tool.toolId, output, result);
  }
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

function assertOptionalStrings(value: unknown, label: string): asserts value is string[] | undefined {
  if (value === undefined) return;
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string' || item === '')) {
    throw new ToolgateArgumentError(`${label} must be an array of non-empty strings`, 'ERR_INVALID_ARG_TYPE');
  }
}

function checkOptions(options: ToolsetOptions): void {
  assertObject(options, '"options"');
  assertOptionalString(options.userId, 'options.userId');
  assertOptionalStrings(options.apps, 'options.apps');
  assertOptionalStrings(options.tools, 'options.tools');
  for (const toolId of options.tools ?? []) {
    if (!splitToolId(toolId)) {
      throw new ToolgateArgumentError(
        `options.tools: "${toolId}" is not a composite tool id (<appId>:::<toolName>)`,
        'ERR_INVALID_ARG_VALUE',
      );
    }
  }
  assertOptionalString(options.q, 'options.q');
  if (options.limit !== undefined && (!Number.isInteger(options.limit) || options.limit < 1)) {
    throw new ToolgateArgumentError(
      'options.limit must be a whole number of at least 1',
      'ERR_INVALID_ARG_VALUE',
    );
  }
  if (
    options.pageSize !== undefined &&
    (!Number.isInteger(options.pageSize) || options.pageSize < 1 || options.pageSize > LIST_TOOLS_MAX_LIMIT)
  ) {
    throw new ToolgateArgumentError(
      `options.pageSize must be a whole number from 1 to ${LIST_TOOLS_MAX_LIMIT}`,
      'ERR_INVALID_ARG_VALUE',
    );
  }
  assertOptionalSignal(options.signal, 'options.signal');
  const authorization = options.authorization;
  if (authorization !== undefined) {
    assertObject(authorization, 'options.authorization');
    assertString(authorization.clientRedirectUri, 'options.authorization.clientRedirectUri');
    if (authorization.wait !== undefined) {
      assertObject(authorization.wait, 'options.authorization.wait');
      assertFunction(authorization.wait.onAuthorizationUrl, 'options.authorization.wait.onAuthorizationUrl');
      assertOptionalMs(authorization.wait.timeoutMs, 'options.authorization.wait.timeoutMs');
    }
  }
}

/**
 * Reads the catalog (`GET /tools`, every page), keeps the tools the options select, and names
 * them for models. A failure to read the catalog is answered as a typed failure; options that
 * cannot work (a named tool the key cannot see, tools that need a user and no `userId`) throw a
 * {@link ToolgateArgumentError}.
 *
 * @example
 * const loaded = await loadToolset(toolgate, { userId: 'user-42', q: 'calendar', limit: 20 });
 * if (!loaded.ok) throw new Error(failureMessage(loaded));
 * for (const tool of loaded.toolset.tools) console.log(tool.name, '→', tool.toolId);
 */
export async function loadToolset(
  client: Toolgate,
  options: ToolsetOptions = {},
): Promise<Result<{ toolset: Toolset }>> {
  checkOptions(options);
  const read = await readCatalog(client, options);
  if (!read.ok) return read;
  const missing = (options.tools ?? []).filter((toolId) => !read.tools.some((t) => t.toolId === toolId));
  if (missing.length > 0) {
    throw new ToolgateArgumentError(
      `options.tools: ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not in the catalog of this key${options.q ? ' (or not matched by options.q)' : ''}`,
      'ERR_INVALID_ARG_VALUE',
    );
  }
  const userId = options.userId ?? client.userId;
  const needsUser = read.tools.find((tool) => tool.requiresUserAuth);
  if (needsUser && userId === undefined) {
    throw new ToolgateArgumentError(
      `options.userId must be given (or userId set on the client): ${needsUser.toolId} acts for an end user`,
      'ERR_INVALID_ARG_VALUE',
    );
  }
  const named = await nameTools(read.tools);
  const tools = new Map<string, ToolsetTool>();
  for (const [name, view] of named) {
    tools.set(name, {
      name,
      toolId: view.toolId,
      appId: view.appId,
      description: view.description,
      parameters: view.parameters,
      requiresUserAuth: view.requiresUserAuth,
      scopes: view.scopes,
    });
  }
  return {
    ok: true,
    toolset: new Toolset(client, tools, userId, options.authorization),
    requestId: read.requestId,
  };
}

/**
 * Every page of `GET /tools` for each app asked for, following `next_cursor`. A server that does
 * not page (no `next_cursor`) or repeats a cursor ends the walk.
 */
async function readCatalog(
  client: Toolgate,
  options: ToolsetOptions,
): Promise<{ ok: true; tools: ToolView[]; requestId: string | undefined } | Failure> {
  const named = options.tools ? new Set(options.tools) : undefined;
  const apps = options.apps ? new Set(options.apps) : undefined;
  const listings: Array<string | undefined> =
    apps || named
      ? [...new Set([...(apps ?? []), ...[...(named ?? [])].map((id) => splitToolId(id)?.appId ?? '')])]
      : [undefined];
  const selected = (tool: ToolView) =>
    (!apps && !named) || apps?.has(tool.appId) === true || named?.has(tool.toolId) === true;
  const found = new Map<string, ToolView>();
  let requestId: string | undefined;
  const full = () => options.limit !== undefined && found.size >= options.limit;

  for (const appId of listings) {
    const cursors = new Set<string>();
    let cursor: string | undefined;
    while (!full()) {
      const page = await client.listTools({
        ...(appId !== undefined ? { appId } : {}),
        ...(options.q !== undefined ? { q: options.q } : {}),
        ...(cursor !== undefined ? { cursor } : {}),
        limit: options.pageSize ?? LIST_TOOLS_MAX_LIMIT,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      if (!page.ok) return page;
      requestId ??= page.requestId;
      for (const tool of page.tools) {
        if (!full() && selected(tool)) found.set(tool.toolId, tool);
      }
      cursor = page.nextCursor;
      if (cursor === undefined || cursors.has(cursor) || page.tools.length === 0) break;
      cursors.add(cursor);
    }
  }
  return { ok: true, tools: [...found.values()], requestId };
}
