import type { ExecuteWithAuthOptions } from '../auth-loop.ts';
import type { ToolSelector } from './turn.ts';

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
  /**
   * A task in words: the tools offered are the best `limit` that `searchTools` finds for it (within
   * `apps` and `tools`), instead of the whole catalog.
   */
  query?: string;
  /** @deprecated The former name of `query`; the same search. */
  q?: string;
  /**
   * How many tools a search takes: the best `limit` for `query` and for each turn's selection
   * (default 20, and never more than `maxTools` allows). It never cuts the catalog: a catalog over
   * `maxTools` changes strategy (`auto`) or is an error naming the options that narrow it (`all`).
   */
  limit?: number;
  /**
   * The per-turn selection: from a turn's text (the last user message) to a search text or to the
   * tools to offer. Without it, a turn's selection searches for the user's own words. Used by the
   * AI SDK's `prepareStep` and each adapter's `forTurn`.
   */
  select?: ToolSelector;
  /**
   * How the model reaches the tools (default `auto`): `all` (a definition each; more than
   * `maxTools` is an error), `search` (`search_tools` + `call_tool`), or `auto` (`all` while they fit
   * `maxTools`, else `search`).
   */
  strategy?: 'auto' | 'all' | 'search';
  /** Tool definitions the provider is given at most (OpenAI: 128, which is also the default). */
  maxTools?: number;
  /** Tools per `GET /tools` request, 1–1000 (default 1000); every page is read. */
  pageSize?: number;
  /** `auth_required` handling; without it the model is told the user must connect the app first. */
  authorization?: ToolsetAuthorization;
  /** Aborts loading the catalog. */
  signal?: AbortSignal;
}
