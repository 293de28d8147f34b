import ky, { type KyInstance } from 'ky';
import type { z } from 'zod';
import { ERROR_STATUS } from '../../shared/errors.ts';
import { HEADER } from '../../shared/headers.ts';
import { type ApiError, type Failure, isErrorBody } from './results.ts';

/** What every request of one client shares. */
export interface TransportOptions {
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey: string;
  /** Sent as `X-Service-Client-Id` when set (agent calls; admin calls have none). */
  clientId?: string | undefined;
  fetch?: typeof globalThis.fetch | undefined;
  /** Client-side time-out of each request; `undefined` or `0`: none (the server has its own). */
  timeoutMs?: number | undefined;
}

export interface RequestSpec<S extends z.ZodType> {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path below the base URL, without a leading slash, each segment already encoded. */
  path: string;
  searchParams?: Record<string, string | undefined>;
  json?: unknown;
  headers?: Record<string, string | undefined>;
  signal?: AbortSignal | undefined;
  /** The contract's schema of the 2xx body. */
  schema: S;
}

export interface Answer<T> {
  ok: true;
  value: T;
  status: number;
  headers: Headers;
  requestId: string | undefined;
}

/** One HTTP exchange with the service, answered as a value: never throws for a protocol failure. */
export class Transport {
  readonly #ky: KyInstance;

  constructor(options: TransportOptions) {
    const headers: Record<string, string> = { authorization: `Bearer ${options.apiKey}` };
    if (options.clientId !== undefined) headers[HEADER.clientId] = options.clientId;
    this.#ky = ky.create({
      prefixUrl: options.baseUrl,
      headers,
      // Retries are the SDK's own decision (only with an idempotency key), never ky's.
      retry: 0,
      throwHttpErrors: false,
      timeout: options.timeoutMs ? options.timeoutMs : false,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
  }

  async send<S extends z.ZodType>(spec: RequestSpec<S>): Promise<Answer<z.output<S>> | Failure> {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(spec.headers ?? {}))
      if (value !== undefined) headers[name] = value;
    const searchParams: Record<string, string> = {};
    for (const [name, value] of Object.entries(spec.searchParams ?? {}))
      if (value !== undefined) searchParams[name] = value;

    let response: Response;
    let text: string;
    try {
      response = await this.#ky(spec.path, {
        method: spec.method,
        headers,
        searchParams,
        ...(spec.json !== undefined ? { json: spec.json } : {}),
        ...(spec.signal ? { signal: spec.signal } : {}),
      });
      text = await response.text();
    } catch (error) {
      return networkFailure(error, spec.signal);
    }
    const requestId = response.headers.get(HEADER.requestId) ?? undefined;
    const json = parseJson(text);

    if (response.status >= 200 && response.status < 300) {
      const parsed = spec.schema.safeParse(json);
      if (parsed.success) {
        return {
          ok: true,
          value: parsed.data,
          status: response.status,
          headers: response.headers,
          requestId,
        };
      }
      return unexpected(
        response.status,
        text,
        requestId,
        'The answer does not have the shape of the contract.',
      );
    }
    if (isErrorBody(json) && ERROR_STATUS[json.error] === response.status) {
      return { ok: false, error: json.error, status: response.status, body: json, requestId } as ApiError;
    }
    return unexpected(
      response.status,
      text,
      requestId,
      `The server answered ${response.status} without a contract error body.`,
    );
  }
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function unexpected(status: number, text: string, requestId: string | undefined, message: string): Failure {
  return { ok: false, error: 'unexpected_response', status, message, text, requestId };
}

/** Maps whatever fetch (through ky) threw: the caller's abort, a time-out, or a network failure. */
export function networkFailure(error: unknown, signal: AbortSignal | undefined): Failure {
  if (signal?.aborted) return aborted(signal.reason);
  const name = (error as { name?: unknown } | null)?.name;
  const timedOut = name === 'TimeoutError';
  const detail = describe(error);
  return {
    ok: false,
    error: 'network_error',
    timedOut,
    message: timedOut ? 'The request timed out before the server answered.' : `The request failed: ${detail}`,
    cause: error,
  };
}

export function aborted(reason: unknown): Failure {
  return { ok: false, error: 'aborted', message: 'The operation was aborted by its signal.', reason };
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  const causeMessage =
    cause instanceof Error ? ((cause as { code?: string }).code ?? cause.message) : undefined;
  return causeMessage ? `${error.message} (${causeMessage})` : error.message;
}
