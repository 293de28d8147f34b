import type { z } from 'zod';
import {
  type apiKeySchema,
  clientSchema,
  createApiKeyOutput,
  listApiKeysOutput,
  listClientsOutput,
  listRedirectUrisOutput,
  okOutput,
  redirectUriOutput,
} from '../../shared/schemas/admin.ts';
import {
  type AppView,
  appSchema,
  listAppsOutput,
  type PutAppInput,
  type putAppInput,
  putAppOutput,
} from '../../shared/schemas/apps.ts';
import {
  assertHttpUrl,
  assertObject,
  assertOptionalFunction,
  assertOptionalMs,
  assertOptionalString,
  assertString,
  ToolgateArgumentError,
} from './assert.ts';
import type { Result } from './results.ts';
import { type RequestSpec, Transport } from './transport.ts';

export interface ToolgateAdminOptions {
  baseUrl: string;
  /** A key with the `admin` scope, or the server's `TOOLGATE_ADMIN_KEY`. */
  adminKey: string;
  fetch?: typeof globalThis.fetch;
  timeoutMs?: number;
}

export type ClientView = z.infer<typeof clientSchema>;
export type CreatedApiKey = z.infer<typeof createApiKeyOutput>;
/** A key as listed: never the key itself. */
export type ApiKeyView = z.infer<typeof apiKeySchema>;
/** The registration of `PUT /admin/apps/{appId}`, without the id (docs/reference.md "Administration"). */
export type AppRegistration = Omit<z.input<typeof putAppInput>, 'appId'>;
export type { AppView, PutAppInput };

const seg = encodeURIComponent;

/**
 * The administration API (docs/reference.md "Administration") over REST: clients, redirect URIs, API keys and apps.
 * Every method answers `{ ok: true, … }` or a typed failure.
 *
 * @example
 * import { ToolgateAdmin } from '@toolgate/sdk';
 *
 * const admin = new ToolgateAdmin({ baseUrl: 'http://127.0.0.1:3000', adminKey: process.env.TOOLGATE_ADMIN_KEY! });
 * const client = await admin.createClient('my agent');
 * if (client.ok) {
 *   await admin.addRedirectUri(client.clientId, 'https://agent.example/oauth/done');
 *   const key = await admin.createApiKey(client.clientId, { scopes: ['tools:execute', 'oauth:initiate', 'connections:read'] });
 *   if (key.ok) console.log('API key (shown once):', key.apiKey);
 * }
 */
export class ToolgateAdmin {
  readonly baseUrl: string;
  readonly #transport: Transport;

  constructor(options: ToolgateAdminOptions) {
    assertObject(options, 'options');
    assertHttpUrl(options.baseUrl, 'options.baseUrl');
    assertString(options.adminKey, 'options.adminKey');
    assertOptionalMs(options.timeoutMs, 'options.timeoutMs');
    assertOptionalFunction(options.fetch, 'options.fetch');
    this.baseUrl = options.baseUrl;
    this.#transport = new Transport({
      baseUrl: options.baseUrl,
      apiKey: options.adminKey,
      fetch: options.fetch,
      timeoutMs: options.timeoutMs,
    });
  }

  async #call<S extends z.ZodType>(spec: RequestSpec<S>): Promise<Result<{ value: z.output<S> }>> {
    const answer = await this.#transport.send(spec);
    return answer.ok ? { ok: true, value: answer.value, requestId: answer.requestId } : answer;
  }

  /** Creates an API client (`POST /admin/clients`). @example await admin.createClient('support bot') */
  async createClient(name: string): Promise<Result<ClientView>> {
    assertString(name, '"name"');
    const r = await this.#call({
      method: 'POST',
      path: 'admin/clients',
      json: { name },
      schema: clientSchema,
    });
    return r.ok ? { ok: true, ...r.value, requestId: r.requestId } : r;
  }

  /** Lists the clients (`GET /admin/clients`). @example const r = await admin.listClients(); */
  async listClients(): Promise<Result<{ clients: ClientView[] }>> {
    const r = await this.#call({ method: 'GET', path: 'admin/clients', schema: listClientsOutput });
    return r.ok ? { ok: true, clients: r.value.clients, requestId: r.requestId } : r;
  }

  /**
   * Registers a redirect URI on a client: an absolute http(s) URL, compared by exact string.
   * @example await admin.addRedirectUri('cli_…', 'https://agent.example/oauth/done')
   */
  async addRedirectUri(clientId: string, uri: string): Promise<Result<{ clientId: string; uri: string }>> {
    assertString(clientId, '"clientId"');
    assertString(uri, '"uri"');
    const r = await this.#call({
      method: 'POST',
      path: `admin/clients/${seg(clientId)}/redirect-uris`,
      json: { uri },
      schema: redirectUriOutput,
    });
    return r.ok ? { ok: true, ...r.value, requestId: r.requestId } : r;
  }

  /** The redirect URIs of a client. @example const r = await admin.listRedirectUris('cli_…'); */
  async listRedirectUris(clientId: string): Promise<Result<{ uris: string[] }>> {
    assertString(clientId, '"clientId"');
    const r = await this.#call({
      method: 'GET',
      path: `admin/clients/${seg(clientId)}/redirect-uris`,
      schema: listRedirectUrisOutput,
    });
    return r.ok ? { ok: true, uris: r.value.uris, requestId: r.requestId } : r;
  }

  /** Removes a redirect URI. @example await admin.removeRedirectUri('cli_…', 'https://agent.example/oauth/done') */
  async removeRedirectUri(clientId: string, uri: string): Promise<Result<Record<never, never>>> {
    assertString(clientId, '"clientId"');
    assertString(uri, '"uri"');
    const r = await this.#call({
      method: 'DELETE',
      path: `admin/clients/${seg(clientId)}/redirect-uris`,
      searchParams: { uri },
      schema: okOutput,
    });
    return r.ok ? { ok: true, requestId: r.requestId } : r;
  }

  /**
   * Issues an API key to a client; `apiKey` is shown this once.
   * @example const key = await admin.createApiKey('cli_…', { scopes: ['tools:execute'], name: 'prod' });
   */
  async createApiKey(
    clientId: string,
    options: { scopes: string[]; name?: string },
  ): Promise<Result<CreatedApiKey>> {
    assertString(clientId, '"clientId"');
    assertObject(options, '"options"');
    if (!Array.isArray(options.scopes)) {
      throw new ToolgateArgumentError('options.scopes must be an array of strings', 'ERR_INVALID_ARG_TYPE');
    }
    assertOptionalString(options.name, 'options.name');
    const r = await this.#call({
      method: 'POST',
      path: `admin/clients/${seg(clientId)}/api-keys`,
      json: { scopes: options.scopes, ...(options.name !== undefined ? { name: options.name } : {}) },
      schema: createApiKeyOutput,
    });
    return r.ok ? { ok: true, ...r.value, requestId: r.requestId } : r;
  }

  /** Lists a client's API keys, revoked ones included. @example const r = await admin.listApiKeys('cli_…'); */
  async listApiKeys(clientId: string): Promise<Result<{ keys: ApiKeyView[] }>> {
    assertString(clientId, '"clientId"');
    const r = await this.#call({
      method: 'GET',
      path: `admin/clients/${seg(clientId)}/api-keys`,
      schema: listApiKeysOutput,
    });
    return r.ok ? { ok: true, keys: r.value.keys, requestId: r.requestId } : r;
  }

  /** Revokes an API key; every server refuses it within 5 s. @example await admin.revokeApiKey('key_…') */
  async revokeApiKey(keyId: string): Promise<Result<Record<never, never>>> {
    assertString(keyId, '"keyId"');
    const r = await this.#call({ method: 'DELETE', path: `admin/api-keys/${seg(keyId)}`, schema: okOutput });
    return r.ok ? { ok: true, requestId: r.requestId } : r;
  }

  /**
   * Registers or replaces an app from its OpenAPI document (each operation becomes a tool), or from
   * a remote MCP server (`mcp: { url }`: each tool of its `tools/list` becomes a tool).
   *
   * @example
   * const r = await admin.putApp('petstore', {
   *   provider: 'swagger.petstore',
   *   openapi: petstoreDocument,
   *   auth: { type: 'none' },
   * });
   * if (r.ok) console.log(r.tools);
   */
  async putApp(appId: string, registration: AppRegistration): Promise<Result<z.infer<typeof putAppOutput>>> {
    assertString(appId, '"appId"');
    assertObject(registration, '"registration"');
    const r = await this.#call({
      method: 'PUT',
      path: `admin/apps/${seg(appId)}`,
      json: registration,
      schema: putAppOutput,
    });
    return r.ok ? { ok: true, ...r.value, requestId: r.requestId } : r;
  }

  /** Every registered app, secrets stripped. @example const r = await admin.listApps(); */
  async listApps(): Promise<Result<{ apps: AppView[] }>> {
    const r = await this.#call({ method: 'GET', path: 'admin/apps', schema: listAppsOutput });
    return r.ok ? { ok: true, apps: r.value.apps, requestId: r.requestId } : r;
  }

  /** One app, secrets stripped. @example const r = await admin.getApp('petstore'); */
  async getApp(appId: string): Promise<Result<{ app: AppView }>> {
    assertString(appId, '"appId"');
    const r = await this.#call({ method: 'GET', path: `admin/apps/${seg(appId)}`, schema: appSchema });
    return r.ok ? { ok: true, app: r.value, requestId: r.requestId } : r;
  }

  /** Reads an MCP-server app's tools again. @example const r = await admin.refreshApp('everything'); */
  async refreshApp(appId: string): Promise<Result<z.infer<typeof putAppOutput>>> {
    assertString(appId, '"appId"');
    const r = await this.#call({
      method: 'POST',
      path: `admin/apps/${seg(appId)}/refresh`,
      schema: putAppOutput,
    });
    return r.ok ? { ok: true, ...r.value, requestId: r.requestId } : r;
  }

  /** Deletes an app and its users' grants. @example await admin.deleteApp('petstore') */
  async deleteApp(appId: string): Promise<Result<Record<never, never>>> {
    assertString(appId, '"appId"');
    const r = await this.#call({ method: 'DELETE', path: `admin/apps/${seg(appId)}`, schema: okOutput });
    return r.ok ? { ok: true, requestId: r.requestId } : r;
  }
}
