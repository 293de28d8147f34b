import type { ProxySuccess } from '../../shared/schemas/agent.ts';
import type { ConnectionView } from '../../shared/schemas/oauth.ts';
import type { Failure, Result } from './results.ts';

/**
 * The agent calls as types: what `Toolgate` answers, and the few calls the authorization loop
 * needs from it ({@link AuthLoopClient}). Kept apart from `toolgate.ts` so that the loop depends on
 * this small interface, not on the client class that uses the loop.
 */

export interface ExecuteOptions {
  /** The end user this call acts for; needed by tools of oauth2 apps. Defaults to the client's `userId`. */
  userId?: string;
  /** The app, when `toolId` is a bare tool name rather than `<appId>:::<toolName>`. */
  appId?: string;
  /**
   * Deduplicates retries for 24 hours (docs/reference.md "Idempotency"): a repeat gets the stored answer and the
   * upstream is not called again. 1–255 printable ASCII characters.
   */
  idempotencyKey?: string;
  /**
   * How many times to resend after a network failure or a 409 `idempotency_in_progress`
   * (default 0). Resends always carry the same idempotency key; one is generated when none is given,
   * so the tool can never run twice.
   */
  retries?: number;
  signal?: AbortSignal;
}

/** A tool call that succeeded: the upstream's answer, normalized (docs/reference.md "Agent endpoints"). */
export interface ExecuteSuccess<T = unknown> {
  ok: true;
  /** The upstream body: parsed JSON, a string for `text/*`, `{ content_type, base64 }` otherwise, `null` when empty. */
  data: T;
  meta: ProxySuccess['meta'];
  /** True when the server replayed a stored answer for this idempotency key (the upstream was not called). */
  replayed: boolean;
  /** The idempotency key the call carried, if any. */
  idempotencyKey: string | undefined;
  requestId: string | undefined;
}

/** What `execute` answers: success, or a typed failure (narrow on `error`). */
export type ExecuteResult<T = unknown> = ExecuteSuccess<T> | Failure;

export interface OAuthStart {
  /** Where to send the user: the provider's consent page. */
  authorizationUrl: string;
  state: string;
  /** When the state (and so this URL) stops working: 10 minutes after it was made. */
  expiresAt: string;
}

/** The calls `executeWithAuth` and `waitForConnection` make; `Toolgate` implements them. */
export interface AuthLoopClient {
  /** The default end user of the client. */
  readonly userId: string | undefined;
  execute<T = unknown>(
    toolId: string,
    parameters: Record<string, unknown>,
    options?: ExecuteOptions,
  ): Promise<ExecuteResult<T>>;
  listConnections(options: {
    userId?: string;
    appId?: string;
    signal?: AbortSignal;
  }): Promise<Result<{ connections: ConnectionView[] }>>;
  initiateOAuth(options: {
    appId: string;
    userId?: string;
    clientRedirectUri: string;
    signal?: AbortSignal;
  }): Promise<Result<OAuthStart>>;
}
