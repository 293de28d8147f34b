import { splitToolId } from '../../../shared/ids.ts';
import type { ToolView } from '../../../shared/schemas/agent.ts';
import {
  assertFunction,
  assertObject,
  assertOptionalFunction,
  assertOptionalMs,
  assertOptionalSignal,
  assertOptionalString,
  assertOptionalStrings,
  assertString,
  ToolgateArgumentError,
} from '../assert.ts';
import type { Failure, Result } from '../results.ts';
import { LIST_TOOLS_MAX_LIMIT, SEARCH_TOOLS_DEFAULT_LIMIT, type Toolgate } from '../toolgate.ts';
import { nameTools } from './names.ts';
import type { ToolsetOptions } from './options.ts';
import {
  chooseStrategy,
  frameworkLimits,
  type ProviderLimits,
  SEARCH_PAIR_SIZE,
  type StrategyChoice,
  type ToolStrategyOption,
} from './strategy.ts';
import { Toolset, type ToolsetTool, toolOf } from './toolset.ts';

/** The options as the adapters take them: Anthropic's `strategy` may also be `defer`. */
export type AdapterOptions = Omit<ToolsetOptions, 'strategy'> & { strategy?: ToolStrategyOption };

const STRATEGIES: ReadonlySet<unknown> = new Set(['auto', 'all', 'search', 'defer']);

function wholeNumber(value: unknown, label: string, min: number, max: number): void {
  if (
    value !== undefined &&
    (!Number.isInteger(value) || (value as number) < min || (value as number) > max)
  ) {
    throw new ToolgateArgumentError(
      `${label} must be a whole number from ${min} to ${max}`,
      'ERR_INVALID_ARG_VALUE',
    );
  }
}

function checkOptions(options: AdapterOptions, limits: ProviderLimits): void {
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
  assertOptionalString(options.query, 'options.query');
  assertOptionalString(options.q, 'options.q');
  if (options.query !== undefined && options.q !== undefined) {
    throw new ToolgateArgumentError(
      'options.q is the former name of options.query: give one of them',
      'ERR_INVALID_ARG_VALUE',
    );
  }
  wholeNumber(options.limit, 'options.limit', 1, Number.MAX_SAFE_INTEGER);
  assertOptionalFunction(options.select, 'options.select');
  if (options.strategy !== undefined && !STRATEGIES.has(options.strategy)) {
    throw new ToolgateArgumentError(
      `options.strategy must be ${limits.deferMax === undefined ? "'auto', 'all' or 'search'" : "'auto', 'all', 'search' or 'defer'"}`,
      'ERR_INVALID_ARG_VALUE',
    );
  }
  if (options.strategy === 'defer' && limits.deferMax === undefined) {
    throw new ToolgateArgumentError(
      `options.strategy 'defer' is Anthropic's tool search, which ${limits.provider} does not have: use 'search' or 'auto'`,
      'ERR_INVALID_ARG_VALUE',
    );
  }
  // The search pair and one tool at least.
  wholeNumber(
    options.maxTools,
    'options.maxTools',
    SEARCH_PAIR_SIZE + 1,
    limits.ceiling ?? Number.MAX_SAFE_INTEGER,
  );
  wholeNumber(options.pageSize, 'options.pageSize', 1, LIST_TOOLS_MAX_LIMIT);
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
 * Reads the catalog (`GET /tools`, every page) or searches it (`query`), keeps the tools the
 * options select, chooses how the model reaches them (`strategy`, against the provider's limit)
 * and names them for models. A failure to read the catalog is answered as a typed failure; options
 * that cannot work (a named tool the key cannot see, tools that need a user and no `userId`, more
 * tools than `strategy: 'all'` can offer) throw a {@link ToolgateArgumentError}.
 *
 * @example
 * const loaded = await loadToolset(toolgate, { userId: 'user-42', query: 'calendar events', limit: 20 });
 * if (!loaded.ok) throw new Error(failureMessage(loaded));
 * for (const tool of loaded.toolset.tools) console.log(tool.name, '→', tool.toolId);
 */
export function loadToolset(
  client: Toolgate,
  options: ToolsetOptions = {},
): Promise<Result<{ toolset: Toolset }>> {
  return loadToolsetFor(client, options, frameworkLimits('the model'));
}

/** {@link loadToolset} for a provider's limits (the adapters). */
export async function loadToolsetFor(
  client: Toolgate,
  options: AdapterOptions,
  limits: ProviderLimits,
): Promise<Result<{ toolset: Toolset }>> {
  checkOptions(options, limits);
  const maxTools = options.maxTools ?? limits.maxTools;
  const asked = options.strategy ?? 'auto';
  const query = options.query ?? options.q;
  const userId = options.userId ?? client.userId;

  let choice: StrategyChoice;
  let views: ToolView[] = [];
  let requestId: string | undefined;
  if (query !== undefined) {
    if (asked === 'search' || asked === 'defer') {
      throw new ToolgateArgumentError(
        `options.query chooses the tools to offer, which options.strategy '${asked}' does not: give one of them`,
        'ERR_INVALID_ARG_VALUE',
      );
    }
    const limit = options.limit ?? Math.min(SEARCH_TOOLS_DEFAULT_LIMIT, maxTools);
    if (limit > maxTools) {
      throw new ToolgateArgumentError(
        `options.limit (${limit}) is more than options.maxTools (${maxTools}), the tool definitions ${limits.provider} is given per request`,
        'ERR_INVALID_ARG_VALUE',
      );
    }
    const found = await searchScoped(client, query, options, limit);
    if (!found.ok) return found;
    let named: ToolView[] = [];
    if (options.tools) {
      const read = await readCatalog(client, { ...options, apps: undefined }, Number.POSITIVE_INFINITY);
      if (!read.ok) return read;
      checkNamed(options, read.tools, true);
      named = read.tools;
    }
    views = unique([...found.tools, ...named]);
    requestId = found.requestId;
    // The search chose the tools: they are offered as they are, or the options are refused.
    choice = chooseStrategy('all', views.length, false, maxTools, limits);
    choice.reason = `options.query found ${found.tools.length} tools (options.limit: ${limit})${named.length ? ` beside ${named.length} of options.tools` : ''}`;
  } else if (asked === 'search') {
    choice = { strategy: 'search', reason: "options.strategy is 'search'" };
  } else {
    const stop = (asked === 'all' ? maxTools : (limits.deferMax ?? maxTools)) + 1;
    const read = await readCatalog(client, options, stop);
    if (!read.ok) return read;
    const more = read.tools.length >= stop;
    choice = chooseStrategy(asked, read.tools.length, more, maxTools, limits);
    requestId = read.requestId;
    if (choice.strategy !== 'search') {
      checkNamed(options, read.tools, !more);
      views = read.tools;
    }
  }
  const turnMax = maxTools - (choice.strategy === 'search' ? SEARCH_PAIR_SIZE : 0);
  const turnLimit = options.limit ?? Math.min(SEARCH_TOOLS_DEFAULT_LIMIT, turnMax);
  if (turnLimit > turnMax) {
    throw new ToolgateArgumentError(
      `options.limit (${turnLimit}) is more than the ${turnMax} tools a turn may offer (options.maxTools${choice.strategy === 'search' ? ', less the search pair' : ''})`,
      'ERR_INVALID_ARG_VALUE',
    );
  }
  const needsUser = views.find((tool) => tool.requiresUserAuth);
  if (needsUser && userId === undefined) {
    throw new ToolgateArgumentError(
      `options.userId must be given (or userId set on the client): ${needsUser.toolId} acts for an end user`,
      'ERR_INVALID_ARG_VALUE',
    );
  }
  const tools = new Map<string, ToolsetTool>();
  for (const [name, view] of await nameTools(views)) tools.set(name, toolOf(name, view));
  const toolset = new Toolset({
    client,
    tools,
    userId,
    authorization: options.authorization,
    choice,
    apps: options.apps,
    named: options.tools,
    maxTools,
    turnLimit,
    turnMax,
    select: options.select,
  });
  return { ok: true, toolset, requestId };
}

function unique(views: ToolView[]): ToolView[] {
  return [...new Map(views.map((view) => [view.toolId, view])).values()];
}

/** Named tools must exist (checked only when the catalog was read to its end). */
function checkNamed(options: AdapterOptions, read: ToolView[], complete: boolean): void {
  if (!complete) return;
  const missing = (options.tools ?? []).filter((toolId) => !read.some((t) => t.toolId === toolId));
  if (missing.length > 0) {
    throw new ToolgateArgumentError(
      `options.tools: ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not in the catalog of this key`,
      'ERR_INVALID_ARG_VALUE',
    );
  }
}

/** `query`'s best tools within `apps` (and the apps of named tools), kept to what the options allow. */
async function searchScoped(
  client: Toolgate,
  query: string,
  options: AdapterOptions,
  limit: number,
): Promise<Result<{ tools: ToolView[] }>> {
  const named = options.tools && new Set(options.tools);
  const apps = options.apps && new Set(options.apps);
  const scope =
    apps || named
      ? [...new Set([...(apps ?? []), ...[...(named ?? [])].map((id) => splitToolId(id)?.appId ?? '')])]
      : undefined;
  const found = await client.searchTools(query, {
    limit,
    ...(scope ? { apps: scope } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (!found.ok) return found;
  const allowed = (tool: ToolView) =>
    (!apps && !named) || apps?.has(tool.appId) === true || named?.has(tool.toolId) === true;
  return { ok: true, tools: found.tools.filter(allowed), requestId: found.requestId };
}

/**
 * Pages of `GET /tools` for each app asked for, following `next_cursor`, until `stop` tools are
 * found (then the caller knows there are at least that many). A server that does not page (no
 * `next_cursor`) or repeats a cursor ends the walk.
 */
async function readCatalog(
  client: Toolgate,
  options: AdapterOptions,
  stop: number,
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
  const full = () => found.size >= stop;

  for (const appId of listings) {
    const cursors = new Set<string>();
    let cursor: string | undefined;
    while (!full()) {
      const page = await client.listTools({
        ...(appId !== undefined ? { appId } : {}),
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
