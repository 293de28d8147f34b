/**
 * `@toolgate/sdk`: the agent's client of toolgate.
 *
 * - {@link Toolgate}: run tools, read and search the catalog (`searchTools`), manage connections,
 *   and `executeWithAuth`, the `auth_required` → authorize → retry loop.
 * - {@link ToolgateAdmin}: the administration API (clients, redirect URIs, API keys, apps).
 * - `@toolgate/sdk/trpc`: a typed tRPC client of the same procedures (needs `@trpc/client`).
 * - `@toolgate/sdk/ai`, `/openai`, `/anthropic`, `/langchain`: the catalog's tools for agent
 *   frameworks, over {@link Toolset} ({@link loadToolset}).
 *
 * Every method answers a value: `{ ok: true, … }` or a typed failure whose `error` is one of the
 * contract's codes (docs/reference.md "Calling conventions") or one of the SDK's own kinds (`network_error`,
 * `unexpected_response`, `aborted`, `auth_timeout`).
 *
 * @packageDocumentation
 */

export {
  ERROR_STATUS,
  type ErrorBody,
  type ErrorCode,
  type ErrorExtras,
  type Issue,
} from '../../shared/errors.ts';
export { HEADER } from '../../shared/headers.ts';
export { composeToolId, splitToolId, TOOL_ID_SEPARATOR } from '../../shared/ids.ts';
export type { ProxySuccess, ToolView } from '../../shared/schemas/agent.ts';
export type { AppAuth, PublicAuth } from '../../shared/schemas/apps.ts';
export type { ConnectionStatus, ConnectionView } from '../../shared/schemas/oauth.ts';
export { loadToolset } from './adapters/load.ts';
export type { ModelToolOutput } from './adapters/model-output.ts';
export type { ToolsetAuthorization, ToolsetOptions } from './adapters/options.ts';
export { MissingPeerError } from './adapters/peer.ts';
export {
  ANTHROPIC_STRICT,
  dropOptionalNulls,
  OPENAI_STRICT,
  portableSchema,
  type StrictConversion,
  type StrictProfile,
  strictSchema,
} from './adapters/schemas.ts';
export {
  CALL_TOOL,
  type FoundTool,
  type OfferedTool,
  SEARCH_TOOLS,
} from './adapters/search-pair.ts';
export {
  ANTHROPIC_LIMITS,
  OPENAI_LIMITS,
  type ProviderLimits,
  type ToolStrategy,
  type ToolStrategyOption,
} from './adapters/strategy.ts';
export {
  type ToolCallOutcome,
  Toolset,
  type ToolsetInit,
  type ToolsetTool,
} from './adapters/toolset.ts';
export { type ToolSelector, type Turn, turnOf } from './adapters/turn.ts';
export {
  type ApiKeyView,
  type AppRegistration,
  type AppView,
  type ClientView,
  type CreatedApiKey,
  ToolgateAdmin,
  type ToolgateAdminOptions,
} from './admin.ts';
export type {
  AuthLoopClient,
  ExecuteOptions,
  ExecuteResult,
  ExecuteSuccess,
  OAuthStart,
} from './agent-calls.ts';
export { type ArgumentErrorCode, ToolgateArgumentError } from './assert.ts';
export type {
  AuthorizationInfo,
  AuthProgressEvent,
  ExecuteWithAuthOptions,
  ExecuteWithAuthResult,
  WaitForConnectionOptions,
  WaitForConnectionResult,
} from './auth-loop.ts';
export {
  type Aborted,
  type ApiError,
  type AuthTimeout,
  type Failure,
  type FailureCode,
  failureMessage,
  isApiError,
  isErrorBody,
  type NetworkError,
  type Result,
  type UnexpectedResponse,
} from './results.ts';
export {
  createClient,
  LIST_TOOLS_MAX_LIMIT,
  type ListToolsOptions,
  SEARCH_TOOLS_DEFAULT_LIMIT,
  type SearchedTool,
  type SearchToolsOptions,
  searchText,
  Toolgate,
  type ToolgateOptions,
} from './toolgate.ts';
