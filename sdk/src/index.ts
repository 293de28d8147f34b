/**
 * `@toolgate/sdk`: the agent's client of toolgate.
 *
 * - {@link Toolgate}: run tools, read the catalog, manage connections, and `executeWithAuth`, the
 *   `auth_required` → authorize → retry loop.
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
export type { ModelToolOutput } from './adapters/model-output.ts';
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
  loadToolset,
  type ToolCallOutcome,
  Toolset,
  type ToolsetAuthorization,
  type ToolsetOptions,
  type ToolsetTool,
} from './adapters/toolset.ts';
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
  Toolgate,
  type ToolgateOptions,
} from './toolgate.ts';
