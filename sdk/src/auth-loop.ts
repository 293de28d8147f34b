import { OAUTH_STATE_LIFETIME_MS } from '../../shared/oauth-state.ts';
import type { ConnectionView } from '../../shared/schemas/oauth.ts';
import type { AuthLoopClient, ExecuteOptions, ExecuteResult } from './agent-calls.ts';
import {
  assertFunction,
  assertObject,
  assertOptionalMs,
  assertOptionalSignal,
  assertOptionalString,
  assertString,
  ToolgateArgumentError,
} from './assert.ts';
import type { AuthTimeout, Failure } from './results.ts';
import { sleep } from './sleep.ts';
import { aborted } from './transport.ts';

const DEFAULT_POLL_MS = 1_000;
const DEFAULT_MAX_POLL_MS = 5_000;
const BACKOFF = 1.5;

export interface WaitForConnectionOptions {
  appId: string;
  /** Defaults to the client's `userId`. */
  userId?: string;
  /** Only a connection updated later than this ISO time counts: the wait for a *new* grant. */
  updatedAfter?: string;
  /** How long to wait in all (default 600 000 ms, the OAuth state's lifetime). */
  timeoutMs?: number;
  /** First pause between polls (default 1 000 ms); each pause is 1.5 times the last. */
  pollIntervalMs?: number;
  /** Longest pause between polls (default 5 000 ms). */
  maxPollIntervalMs?: number;
  signal?: AbortSignal;
  /** Called after each poll that did not yet find the connection. */
  onPoll?: (event: { appId: string; waitedMs: number; status: ConnectionView['status'] | 'none' }) => void;
}

export type WaitForConnectionResult =
  | { ok: true; connection: ConnectionView; waitedMs: number; requestId: string | undefined }
  | Failure
  | AuthTimeout;

/** What `onAuthorizationUrl` learns besides the URL. */
export interface AuthorizationInfo {
  appId: string;
  toolId: string;
  userId: string;
  /** True when a stored grant stopped working (revoked, expired) and the user must authorize again. */
  reauth: boolean;
  state: string;
  /** When the URL stops working. */
  expiresAt: string;
  /** Aborts when the SDK stops waiting (connected, timed out or aborted): close any prompt then. */
  signal: AbortSignal;
}

/** Steps of the loop, for logs and user interfaces. */
export type AuthProgressEvent =
  | { type: 'auth_required'; toolId: string; appId: string; reauth: boolean }
  | { type: 'authorization_url'; appId: string; authorizationUrl: string; expiresAt: string }
  | { type: 'waiting'; appId: string; waitedMs: number; status: ConnectionView['status'] | 'none' }
  | { type: 'connected'; appId: string; connection: ConnectionView }
  | { type: 'retrying'; toolId: string; idempotencyKey: string };

export interface ExecuteWithAuthOptions extends Omit<ExecuteOptions, 'retries'> {
  /** Registered on the client; the service sends the user there after the provider. */
  clientRedirectUri: string;
  /** Hands the authorization URL to the user (chat message, browser, QR code …). */
  onAuthorizationUrl: (url: string, info: AuthorizationInfo) => void | Promise<void>;
  /** How long to wait for the user in each authorization round (default 600 000 ms). */
  timeoutMs?: number;
  pollIntervalMs?: number;
  maxPollIntervalMs?: number;
  /** Resends after network failures or 409 `idempotency_in_progress`, same key (default 2). */
  retries?: number;
  /** Authorization rounds before an `auth_required` answer is returned as is (default 1). */
  maxAuthRounds?: number;
  onProgress?: (event: AuthProgressEvent) => void;
}

/** A tool result, or `auth_timeout` when the user did not authorize in time. */
export type ExecuteWithAuthResult<T = unknown> = ExecuteResult<T> | AuthTimeout;

export async function waitForConnection(
  client: AuthLoopClient,
  options: WaitForConnectionOptions,
): Promise<WaitForConnectionResult> {
  assertObject(options, '"options"');
  assertString(options.appId, 'options.appId');
  assertOptionalString(options.userId, 'options.userId');
  assertOptionalString(options.updatedAfter, 'options.updatedAfter');
  assertOptionalMs(options.timeoutMs, 'options.timeoutMs');
  assertOptionalMs(options.pollIntervalMs, 'options.pollIntervalMs', 1);
  assertOptionalMs(options.maxPollIntervalMs, 'options.maxPollIntervalMs', 1);
  assertOptionalSignal(options.signal, 'options.signal');
  const after = options.updatedAfter === undefined ? undefined : Date.parse(options.updatedAfter);
  if (after !== undefined && Number.isNaN(after)) {
    throw new ToolgateArgumentError('options.updatedAfter must be an ISO 8601 time', 'ERR_INVALID_ARG_VALUE');
  }
  const timeoutMs = options.timeoutMs ?? OAUTH_STATE_LIFETIME_MS;
  const maxPause = options.maxPollIntervalMs ?? DEFAULT_MAX_POLL_MS;
  let pause = Math.min(options.pollIntervalMs ?? DEFAULT_POLL_MS, maxPause);
  const started = performance.now();
  const waited = () => Math.round(performance.now() - started);
  let lastError: Failure | undefined;

  for (;;) {
    if (options.signal?.aborted) return aborted(options.signal.reason);
    const listed = await client.listConnections({
      userId: options.userId,
      appId: options.appId,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    let status: ConnectionView['status'] | 'none' = 'none';
    if (listed.ok) {
      lastError = undefined;
      const connection = listed.connections.find((c) => c.appId === options.appId);
      status = connection?.status ?? 'none';
      if (
        connection?.status === 'active' &&
        (after === undefined || Date.parse(connection.updatedAt) > after)
      ) {
        return { ok: true, connection, waitedMs: waited(), requestId: listed.requestId };
      }
    } else if (listed.error === 'aborted') {
      return listed;
    } else if (isTransient(listed)) {
      lastError = listed;
    } else {
      // A wrong key, a missing scope, an unknown app: waiting will not change the answer.
      return listed;
    }
    options.onPoll?.({ appId: options.appId, waitedMs: waited(), status });
    const remaining = timeoutMs - (performance.now() - started);
    if (remaining <= 0) {
      return {
        ok: false,
        error: 'auth_timeout',
        message: `The user did not authorize ${options.appId} within ${timeoutMs} ms.`,
        appId: options.appId,
        authorizationUrl: undefined,
        waitedMs: waited(),
        lastError,
      };
    }
    if (!(await sleep(Math.min(pause, remaining), options.signal))) return aborted(options.signal?.reason);
    pause = Math.min(pause * BACKOFF, maxPause);
  }
}

function isTransient(failure: Failure): boolean {
  return (
    failure.error === 'network_error' ||
    failure.error === 'unexpected_response' ||
    failure.error === 'internal_error' ||
    failure.error === 'rate_limited'
  );
}

export async function executeWithAuth<T>(
  client: AuthLoopClient,
  toolId: string,
  parameters: Record<string, unknown>,
  options: ExecuteWithAuthOptions,
): Promise<ExecuteWithAuthResult<T>> {
  assertString(toolId, '"toolId"');
  assertObject(parameters, '"parameters"');
  assertObject(options, '"options"');
  assertString(options.clientRedirectUri, 'options.clientRedirectUri');
  assertFunction(options.onAuthorizationUrl, 'options.onAuthorizationUrl');
  assertOptionalSignal(options.signal, 'options.signal');
  const userId = options.userId ?? client.userId;
  assertString(userId, 'options.userId');
  const maxRounds = options.maxAuthRounds ?? 1;
  if (!Number.isInteger(maxRounds) || maxRounds < 0 || maxRounds > 10) {
    throw new ToolgateArgumentError(
      'options.maxAuthRounds must be a whole number from 0 to 10',
      'ERR_INVALID_ARG_VALUE',
    );
  }
  const { signal, onProgress } = options;
  // One key for the first call and every retry: the server runs the tool at most once for it.
  const idempotencyKey = options.idempotencyKey ?? crypto.randomUUID();
  const executeOptions: ExecuteOptions = {
    userId,
    idempotencyKey,
    retries: options.retries ?? 2,
    ...(options.appId !== undefined ? { appId: options.appId } : {}),
    ...(signal ? { signal } : {}),
  };

  for (let round = 0; ; round += 1) {
    if (round > 0) onProgress?.({ type: 'retrying', toolId, idempotencyKey });
    const result = await client.execute<T>(toolId, parameters, executeOptions);
    if (result.ok || result.error !== 'auth_required' || round >= maxRounds) return result;

    const appId = result.body.app_id;
    const reauth = result.body.reauth_required === true;
    onProgress?.({ type: 'auth_required', toolId, appId, reauth });

    // The connection as it is now: after a reauthorization only a newer grant counts.
    const before = await client.listConnections({ userId, appId, ...(signal ? { signal } : {}) });
    if (!before.ok) return before;
    const existing = before.connections.find((c) => c.appId === appId);
    if (!reauth && existing?.status === 'active') continue; // authorized meanwhile (another tab, another agent)

    const start = await client.initiateOAuth({
      appId,
      userId,
      clientRedirectUri: options.clientRedirectUri,
      ...(signal ? { signal } : {}),
    });
    if (!start.ok) return start;
    onProgress?.({
      type: 'authorization_url',
      appId,
      authorizationUrl: start.authorizationUrl,
      expiresAt: start.expiresAt,
    });

    const waited = await authorize(client, options, {
      appId,
      toolId,
      userId,
      reauth,
      state: start.state,
      expiresAt: start.expiresAt,
      authorizationUrl: start.authorizationUrl,
      updatedAfter: existing?.updatedAt,
    });
    if (!waited.ok) {
      return waited.error === 'auth_timeout'
        ? { ...waited, authorizationUrl: start.authorizationUrl }
        : waited;
    }
    onProgress?.({ type: 'connected', appId, connection: waited.connection });
  }
}

/**
 * Hands the URL over and waits for the connection at the same time: a callback that awaits the
 * user is fine, and so is one that returns at once. A callback that throws ends the wait and its
 * error is rethrown, since it is the caller's own failure.
 */
async function authorize(
  client: AuthLoopClient,
  options: ExecuteWithAuthOptions,
  round: Omit<AuthorizationInfo, 'signal'> & { authorizationUrl: string; updatedAfter: string | undefined },
): Promise<WaitForConnectionResult> {
  const done = new AbortController();
  const stop = options.signal ? AbortSignal.any([options.signal, done.signal]) : done.signal;
  let callbackFailure: { error: unknown } | undefined;
  const { authorizationUrl, updatedAfter, ...info } = round;
  void Promise.resolve()
    .then(() => options.onAuthorizationUrl(authorizationUrl, { ...info, signal: done.signal }))
    .catch((error: unknown) => {
      callbackFailure = { error };
      done.abort(error);
    });
  try {
    const waited = await waitForConnection(client, {
      appId: round.appId,
      userId: round.userId,
      signal: stop,
      ...(updatedAfter !== undefined ? { updatedAfter } : {}),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.pollIntervalMs !== undefined ? { pollIntervalMs: options.pollIntervalMs } : {}),
      ...(options.maxPollIntervalMs !== undefined ? { maxPollIntervalMs: options.maxPollIntervalMs } : {}),
      onPoll: (event) => options.onProgress?.({ type: 'waiting', ...event }),
    });
    if (callbackFailure) throw callbackFailure.error;
    if (!waited.ok && waited.error === 'aborted' && options.signal?.aborted)
      return aborted(options.signal.reason);
    return waited;
  } finally {
    done.abort(new Error('The SDK stopped waiting for this authorization.'));
  }
}
