import { HEADER } from '../../shared/headers.ts';
import { IDEMPOTENCY_KEY_PATTERN } from '../../shared/ids.ts';
import { okOutput } from '../../shared/schemas/admin.ts';
import { listToolsOutput, proxyOutput, type ToolView } from '../../shared/schemas/agent.ts';
import {
  type ConnectionView,
  initiateOAuthOutput,
  listConnectionsOutput,
} from '../../shared/schemas/oauth.ts';
import type { AuthLoopClient, ExecuteOptions, ExecuteResult, OAuthStart } from './agent-calls.ts';
import {
  assertHttpUrl,
  assertObject,
  assertOptionalFunction,
  assertOptionalMs,
  assertOptionalSignal,
  assertOptionalString,
  assertOptionalStrings,
  assertString,
  ToolgateArgumentError,
} from './assert.ts';
import {
  type ExecuteWithAuthOptions,
  type ExecuteWithAuthResult,
  executeWithAuth,
  type WaitForConnectionOptions,
  type WaitForConnectionResult,
  waitForConnection,
} from './auth-loop.ts';
import type { Failure, Result } from './results.ts';
import { sleep } from './sleep.ts';
import { aborted, Transport } from './transport.ts';

/** How to reach the service as one agent (an API client with its key). */
export interface ToolgateOptions {
  /** The service's base URL, e.g. `https://toolgate.example.com`. */
  baseUrl: string;
  /** The agent's secret API key (`tg_key_…`). */
  apiKey: string;
  /** The public client id the key was issued to (`cli_…`), sent as `X-Service-Client-Id`. */
  clientId: string;
  /** The end user calls act for when a call names none (`X-Service-User-Id`). */
  userId?: string;
  /** A `fetch` to use instead of the global one (tests, proxies, instrumentation). */
  fetch?: typeof globalThis.fetch;
  /** Client-side time-out of each HTTP request in milliseconds (default: none; the server has its own). */
  timeoutMs?: number;
}

export interface ListToolsOptions {
  /** Only this app's tools. */
  appId?: string;
  /** Words that must all occur, case-insensitively, in a tool's name, summary or description. */
  q?: string;
  /** Tools per page, 1–1000. */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
  signal?: AbortSignal;
}

/** The largest page `GET /tools` serves (docs/reference.md "Agent endpoints"). */
export const LIST_TOOLS_MAX_LIMIT = 1000;

export interface SearchToolsOptions {
  /** Only the tools of these apps (default: every app the key may run). */
  apps?: string[];
  /** How many of the best-ranked tools, 1–1000 (default 20, as the server's). */
  limit?: number;
  signal?: AbortSignal;
}

/** A tool `searchTools` found; `score` is its relevance to the text (higher is closer). */
export type SearchedTool = ToolView;

/** Tools a search answers when the caller names no `limit`: the server's default for `q`. */
export const SEARCH_TOOLS_DEFAULT_LIMIT = 20;

/**
 * Search text sent at most: relevance gains nothing from more, and servers before ranked search
 * refuse a longer `q`.
 */
export const SEARCH_TEXT_MAX = 1000;

/**
 * The text of a search as `GET /tools?q=` takes it: control characters (line breaks of a chat
 * message included) become spaces, runs of spaces one, and the text ends at
 * {@link SEARCH_TEXT_MAX} characters, at a word's end where there is one.
 */
export function searchText(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: they are what this removes
  const flat = text.replace(/[\u0000-\u001f\u007f\s]+/g, ' ').trim();
  if (flat.length <= SEARCH_TEXT_MAX) return flat;
  const cut = flat.slice(0, SEARCH_TEXT_MAX);
  const space = cut.lastIndexOf(' ');
  return space > 0 ? cut.slice(0, space) : cut;
}

const RETRYABLE: ReadonlySet<string> = new Set<Failure['error']>([
  'network_error',
  'idempotency_in_progress',
]);

/**
 * The agent's client of toolgate: runs tools, reads the catalog, manages the end users'
 * connections, and wraps the `auth_required` → authorize → retry loop (`executeWithAuth`).
 * No method throws for a protocol failure: each answers `{ ok: true, … }` or a typed failure.
 *
 * @example
 * import { Toolgate } from '@toolgate/sdk';
 *
 * const toolgate = new Toolgate({
 *   baseUrl: 'https://toolgate.example.com',
 *   apiKey: process.env.TOOLGATE_API_KEY!,
 *   clientId: 'cli_0123456789abcdefghij',
 * });
 * const result = await toolgate.execute('petstore:::getPetById', { petId: 1 });
 * if (result.ok) console.log(result.data);
 * else console.error(result.error, failureMessage(result));
 */
export class Toolgate implements AuthLoopClient {
  readonly baseUrl: string;
  readonly clientId: string;
  readonly userId: string | undefined;
  readonly #transport: Transport;

  constructor(options: ToolgateOptions) {
    assertObject(options, 'options');
    assertHttpUrl(options.baseUrl, 'options.baseUrl');
    assertString(options.apiKey, 'options.apiKey');
    assertString(options.clientId, 'options.clientId');
    assertOptionalString(options.userId, 'options.userId');
    assertOptionalMs(options.timeoutMs, 'options.timeoutMs');
    assertOptionalFunction(options.fetch, 'options.fetch');
    this.baseUrl = options.baseUrl;
    this.clientId = options.clientId;
    this.userId = options.userId;
    this.#transport = new Transport({
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      clientId: options.clientId,
      fetch: options.fetch,
      timeoutMs: options.timeoutMs,
    });
  }

  /**
   * Runs one tool through `POST /proxyV2`.
   *
   * @example
   * const result = await toolgate.execute('github:::create_issue', { owner: 'o', repo: 'r', body: { title: 'Hi' } }, {
   *   userId: 'user-42',
   *   idempotencyKey: crypto.randomUUID(),
   * });
   * if (!result.ok && result.error === 'invalid_parameters') {
   *   for (const issue of result.body.issues) console.log(issue.path, issue.message);
   * }
   */
  async execute<T = unknown>(
    toolId: string,
    parameters: Record<string, unknown>,
    options: ExecuteOptions = {},
  ): Promise<ExecuteResult<T>> {
    assertString(toolId, '"toolId"');
    assertObject(parameters, '"parameters"');
    assertObject(options, '"options"');
    assertOptionalString(options.userId, 'options.userId');
    assertOptionalString(options.appId, 'options.appId');
    assertOptionalSignal(options.signal, 'options.signal');
    const retries = options.retries ?? 0;
    if (!Number.isInteger(retries) || retries < 0 || retries > 10) {
      throw new ToolgateArgumentError(
        'options.retries must be a whole number from 0 to 10',
        'ERR_INVALID_ARG_VALUE',
      );
    }
    let idempotencyKey = options.idempotencyKey;
    if (
      idempotencyKey !== undefined &&
      (typeof idempotencyKey !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(idempotencyKey))
    ) {
      throw new ToolgateArgumentError(
        'options.idempotencyKey must be 1 to 255 printable ASCII characters',
        'ERR_INVALID_ARG_VALUE',
      );
    }
    // A resend without a key could run the tool twice: retries always come with one.
    if (retries > 0) idempotencyKey ??= crypto.randomUUID();

    for (let attempt = 0; ; attempt += 1) {
      const answer = await this.#transport.send({
        method: 'POST',
        path: 'proxyV2',
        json: { toolId, parameters },
        headers: {
          [HEADER.userId]: options.userId ?? this.userId,
          [HEADER.appId]: options.appId,
          [HEADER.idempotencyKey]: idempotencyKey,
        },
        signal: options.signal,
        schema: proxyOutput,
      });
      if (answer.ok) {
        return {
          ok: true,
          data: answer.value.data as T,
          meta: answer.value.meta,
          replayed: answer.headers.get(HEADER.idempotentReplayed) === 'true',
          idempotencyKey,
          requestId: answer.requestId,
        };
      }
      if (attempt >= retries || !RETRYABLE.has(answer.error)) return answer;
      if (!(await sleep(Math.min(250 * 2 ** attempt, 4_000), options.signal))) {
        return aborted(options.signal?.reason);
      }
    }
  }

  /**
   * One page of the tools this key may run, with their parameter JSON Schemas (`GET /tools`).
   * `q` keeps the tools whose name or description holds every word; `limit` (1–1000) and `cursor`
   * page through a long catalog: pass `nextCursor` back until it is `undefined`. A server that
   * does not page answers every tool at once, without `nextCursor`.
   *
   * @example
   * let cursor: string | undefined;
   * do {
   *   const page = await toolgate.listTools({ q: 'issue', limit: 100, cursor });
   *   if (!page.ok) break;
   *   for (const tool of page.tools) console.log(tool.toolId, tool.requiresUserAuth);
   *   cursor = page.nextCursor;
   * } while (cursor);
   */
  async listTools(
    options: ListToolsOptions = {},
  ): Promise<Result<{ tools: ToolView[]; nextCursor: string | undefined }>> {
    assertObject(options, '"options"');
    assertOptionalString(options.appId, 'options.appId');
    assertOptionalString(options.q, 'options.q');
    assertOptionalString(options.cursor, 'options.cursor');
    if (
      options.limit !== undefined &&
      (!Number.isInteger(options.limit) || options.limit < 1 || options.limit > LIST_TOOLS_MAX_LIMIT)
    ) {
      throw new ToolgateArgumentError(
        `options.limit must be a whole number from 1 to ${LIST_TOOLS_MAX_LIMIT}`,
        'ERR_INVALID_ARG_VALUE',
      );
    }
    assertOptionalSignal(options.signal, 'options.signal');
    const answer = await this.#transport.send({
      method: 'GET',
      path: 'tools',
      searchParams: {
        appId: options.appId,
        q: options.q,
        limit: options.limit === undefined ? undefined : String(options.limit),
        cursor: options.cursor,
      },
      signal: options.signal,
      schema: listToolsOutput,
    });
    if (!answer.ok) return answer;
    return {
      ok: true,
      tools: answer.value.tools,
      // Present only when more tools follow; a server that does not page never sends it.
      nextCursor: answer.value.next_cursor,
      requestId: answer.requestId,
    };
  }

  /**
   * The tools that fit a task, best first (`GET /tools?q=…`, ranked by relevance): describe the
   * task as a person would ("open a bug report in acme/app") and the best matches come first, each
   * with its `score`. `apps` narrows the search to those apps; `limit` (1–1000, default 20) is how
   * many of the best are answered. Line breaks and other control characters in `text` count as
   * spaces, and only its first 1,000 characters are searched.
   *
   * @example
   * const found = await toolgate.searchTools('open a bug report in acme/app', { apps: ['github'], limit: 5 });
   * if (found.ok) {
   *   for (const tool of found.tools) console.log(tool.toolId, tool.score, tool.title);
   *   const best = found.tools[0];
   *   if (best) await toolgate.execute(best.toolId, { owner: 'acme', repo: 'app', body: { title: 'Crash on start' } });
   * }
   */
  async searchTools(
    text: string,
    options: SearchToolsOptions = {},
  ): Promise<Result<{ tools: SearchedTool[] }>> {
    assertString(text, '"text"');
    assertObject(options, '"options"');
    assertOptionalStrings(options.apps, 'options.apps');
    const limit = options.limit ?? SEARCH_TOOLS_DEFAULT_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > LIST_TOOLS_MAX_LIMIT) {
      throw new ToolgateArgumentError(
        `options.limit must be a whole number from 1 to ${LIST_TOOLS_MAX_LIMIT}`,
        'ERR_INVALID_ARG_VALUE',
      );
    }
    assertOptionalSignal(options.signal, 'options.signal');
    const q = searchText(text);
    if (q === '') return { ok: true, tools: [], requestId: undefined };
    const apps = options.apps && [...new Set(options.apps)];
    if (apps?.length === 0) return { ok: true, tools: [], requestId: undefined };
    const answer = await this.#transport.send({
      method: 'GET',
      path: 'tools',
      searchParams: {
        q,
        // One app is the contract's `appId`; several are `apps`.
        appId: apps?.length === 1 ? apps[0] : undefined,
        apps: apps && apps.length > 1 ? apps.join(',') : undefined,
        limit: String(limit),
      },
      signal: options.signal,
      schema: listToolsOutput,
    });
    if (!answer.ok) return answer;
    // A server that does not know `apps` answers every app's tools: keep the ones asked for.
    const wanted = apps && new Set(apps);
    const tools = wanted ? answer.value.tools.filter((tool) => wanted.has(tool.appId)) : answer.value.tools;
    return { ok: true, tools: tools.slice(0, limit), requestId: answer.requestId };
  }

  /**
   * The user's connections (OAuth grants) of this client (`GET /connections`). No token is ever shown.
   *
   * @example
   * const result = await toolgate.listConnections({ userId: 'user-42' });
   * if (result.ok) console.log(result.connections.map((c) => `${c.appId}: ${c.status}`));
   */
  async listConnections(options: {
    userId?: string;
    appId?: string;
    signal?: AbortSignal;
  }): Promise<Result<{ connections: ConnectionView[] }>> {
    assertObject(options, '"options"');
    const userId = this.#userId(options.userId);
    assertOptionalString(options.appId, 'options.appId');
    assertOptionalSignal(options.signal, 'options.signal');
    const answer = await this.#transport.send({
      method: 'GET',
      path: 'connections',
      searchParams: { appId: options.appId },
      headers: { [HEADER.userId]: userId },
      signal: options.signal,
      schema: listConnectionsOutput,
    });
    return answer.ok
      ? { ok: true, connections: answer.value.connections, requestId: answer.requestId }
      : answer;
  }

  /**
   * Forgets the user's grant for an app, revoking it at the provider when it can
   * (`DELETE /connections/{appId}`).
   *
   * @example
   * const result = await toolgate.deleteConnection('github', { userId: 'user-42' });
   */
  async deleteConnection(
    appId: string,
    options: { userId?: string; signal?: AbortSignal } = {},
  ): Promise<Result<Record<never, never>>> {
    assertString(appId, '"appId"');
    assertObject(options, '"options"');
    const userId = this.#userId(options.userId);
    assertOptionalSignal(options.signal, 'options.signal');
    const answer = await this.#transport.send({
      method: 'DELETE',
      path: `connections/${encodeURIComponent(appId)}`,
      headers: { [HEADER.userId]: userId },
      signal: options.signal,
      schema: okOutput,
    });
    return answer.ok ? { ok: true, requestId: answer.requestId } : answer;
  }

  /**
   * Starts the end user's OAuth flow for an app (`POST /initiateOAuth`). Send the user to
   * `authorizationUrl`; after consent the service redirects them to `clientRedirectUri` (which must
   * be registered on the client) with `status=success` or `status=error&reason=…`.
   *
   * @example
   * const start = await toolgate.initiateOAuth({
   *   appId: 'github',
   *   userId: 'user-42',
   *   clientRedirectUri: 'https://agent.example/oauth/done',
   * });
   * if (start.ok) showLink(start.authorizationUrl);
   */
  async initiateOAuth(options: {
    appId: string;
    userId?: string;
    clientRedirectUri: string;
    signal?: AbortSignal;
  }): Promise<Result<OAuthStart>> {
    assertObject(options, '"options"');
    assertString(options.appId, 'options.appId');
    const userId = this.#userId(options.userId);
    assertString(options.clientRedirectUri, 'options.clientRedirectUri');
    assertOptionalSignal(options.signal, 'options.signal');
    const answer = await this.#transport.send({
      method: 'POST',
      path: 'initiateOAuth',
      json: { appId: options.appId, userId, clientRedirectUri: options.clientRedirectUri },
      signal: options.signal,
      schema: initiateOAuthOutput,
    });
    if (!answer.ok) return answer;
    return {
      ok: true,
      authorizationUrl: answer.value.authorizationUrl,
      state: answer.value.state,
      expiresAt: answer.value.expires_at,
      requestId: answer.requestId,
    };
  }

  /**
   * Polls `GET /connections` (with backoff) until the user's connection to `appId` is `active`
   * — and, with `after`, updated later than that time — or the time-out or the signal ends the wait.
   *
   * @example
   * const connected = await toolgate.waitForConnection({ appId: 'github', userId: 'user-42', timeoutMs: 120_000 });
   * if (connected.ok) console.log('connected with scopes', connected.connection.scopes);
   */
  waitForConnection(options: WaitForConnectionOptions): Promise<WaitForConnectionResult> {
    return waitForConnection(this, options);
  }

  /**
   * Runs a tool and, when the user has not authorized its app (401 `auth_required`, with or
   * without `reauth_required`), starts the OAuth flow, hands the authorization URL to
   * `onAuthorizationUrl`, waits until the connection is active, and retries the call once with the
   * same idempotency key, so that the tool can never run twice.
   *
   * Needs a key with the scopes `tools:execute` (or `tools:execute:<appId>`), `oauth:initiate` and
   * `connections:read`, and `clientRedirectUri` registered on the client.
   *
   * @example
   * const result = await toolgate.executeWithAuth('github:::list_repos', {}, {
   *   userId: 'user-42',
   *   clientRedirectUri: 'https://agent.example/oauth/done',
   *   onAuthorizationUrl: (url) => chat.send(`Please connect GitHub: ${url}`),
   *   timeoutMs: 5 * 60_000,
   * });
   * if (result.ok) console.log(result.data);
   * else if (result.error === 'auth_timeout') chat.send('No authorization yet; ask me again later.');
   */
  executeWithAuth<T = unknown>(
    toolId: string,
    parameters: Record<string, unknown>,
    options: ExecuteWithAuthOptions,
  ): Promise<ExecuteWithAuthResult<T>> {
    return executeWithAuth<T>(this, toolId, parameters, options);
  }

  #userId(userId: string | undefined): string {
    const resolved = userId ?? this.userId;
    if (resolved === undefined) {
      throw new ToolgateArgumentError(
        'options.userId must be given (or userId set on the client)',
        'ERR_INVALID_ARG_VALUE',
      );
    }
    assertString(resolved, 'options.userId');
    return resolved;
  }
}

/**
 * Creates a {@link Toolgate} client; the same as `new Toolgate(options)`.
 *
 * @example
 * const toolgate = createClient({ baseUrl: 'http://127.0.0.1:3000', apiKey, clientId, userId: 'user-42' });
 */
export function createClient(options: ToolgateOptions): Toolgate {
  return new Toolgate(options);
}
