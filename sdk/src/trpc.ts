/**
 * `@toolgate/sdk/trpc`: a typed tRPC client of toolgate's procedures (the same ones the REST
 * routes serve, under `/trpc`). Needs the optional peers `@trpc/client` and `@trpc/server` 11.
 *
 * @packageDocumentation
 */
import { createTRPCClient, httpLink, type TRPCClient, TRPCClientError } from '@trpc/client';
import type { ErrorBody } from '../../shared/errors.ts';
import { HEADER } from '../../shared/headers.ts';
import {
  assertHttpUrl,
  assertObject,
  assertOptionalFunction,
  assertOptionalString,
  assertString,
} from './assert.ts';
import { isErrorBody } from './results.ts';
import type { AppRouter } from './router.ts';

export type { AppRouter, ToolgateErrorShape } from './router.ts';

export interface TrpcClientOptions {
  baseUrl: string;
  /** An agent's API key, or a key with the `admin` scope for `admin.*`. */
  apiKey: string;
  /** The key's client (`X-Service-Client-Id`); needed by every procedure but `admin.*`. */
  clientId?: string;
  /** `X-Service-User-Id` of every call (connections, tools of oauth2 apps). */
  userId?: string;
  /** Further headers of every call, or a function answering them per call. */
  headers?: Record<string, string> | (() => Record<string, string> | Promise<Record<string, string>>);
  fetch?: typeof globalThis.fetch;
}

/**
 * A tRPC client typed with toolgate's router. Errors are `TRPCClientError`s; read the contract's
 * body with {@link contractError}.
 *
 * @example
 * import { createTrpcClient, contractError } from '@toolgate/sdk/trpc';
 *
 * const trpc = createTrpcClient({ baseUrl: 'http://127.0.0.1:3000', apiKey, clientId });
 * const { tools } = await trpc.tools.list.query({});
 * try {
 *   await trpc.proxy.mutate({ toolId: 'demo:::getMe', parameters: {} });
 * } catch (error) {
 *   const body = contractError(error);
 *   if (body?.error === 'auth_required') console.log('authorize', body.app_id);
 * }
 */
export function createTrpcClient(options: TrpcClientOptions): TRPCClient<AppRouter> {
  assertObject(options, 'options');
  assertHttpUrl(options.baseUrl, 'options.baseUrl');
  assertString(options.apiKey, 'options.apiKey');
  assertOptionalString(options.clientId, 'options.clientId');
  assertOptionalString(options.userId, 'options.userId');
  assertOptionalFunction(options.fetch, 'options.fetch');
  const fixed: Record<string, string> = { authorization: `Bearer ${options.apiKey}` };
  if (options.clientId) fixed[HEADER.clientId] = options.clientId;
  if (options.userId) fixed[HEADER.userId] = options.userId;
  const url = new URL('trpc', options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`).href;
  return createTRPCClient<AppRouter>({
    links: [
      httpLink({
        url,
        headers: async () => {
          const extra =
            typeof options.headers === 'function' ? await options.headers() : (options.headers ?? {});
          return { ...extra, ...fixed };
        },
        ...(options.fetch ? { fetch: options.fetch } : {}),
      }),
    ],
  });
}

/**
 * The contract's error body carried by a tRPC error (`error.data.contract`), or `undefined`
 * for anything else (a network failure, a bug in the caller).
 *
 * @example
 * const body = contractError(error);
 * if (body?.error === 'rbac_denied') console.log('missing scope', body.scope);
 */
export function contractError(error: unknown): ErrorBody | undefined {
  if (!(error instanceof TRPCClientError)) return undefined;
  const contract = (error.data as { contract?: unknown } | undefined)?.contract;
  return isErrorBody(contract) ? contract : undefined;
}
