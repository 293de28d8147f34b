/**
 * MCP sign-in, first part (docs/reference.md "MCP sign-in"): the discovery documents, the 401 of
 * /mcp that names them, and dynamic client registration (RFC 7591) with its refusals; and that
 * none of it exists without LOGIN_OIDC_*.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeBackends } from '../support/db.ts';
import { call, startServer, type TestServer } from '../support/server.ts';

/** Sign-in settings whose provider is never contacted by these tests (discovery is lazy). */
const LOGIN_ENV = {
  LOGIN_OIDC_ISSUER: 'https://login.invalid',
  LOGIN_OIDC_CLIENT_ID: 'toolgate',
  LOGIN_OIDC_CLIENT_SECRET: 'login-client-secret-for-tests',
};
const NOT_FOUND = { ok: false, error: 'not_found', message: 'No such path.' };

const mcpRequest = (url: string, headers: Record<string, string> = {}) =>
  fetch(new URL('/mcp', url), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });

describe('without LOGIN_OIDC_*', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer('pglite');
  });
  afterAll(() => server.close());

  it.each([
    ['GET', '/.well-known/oauth-protected-resource/mcp'],
    ['GET', '/.well-known/oauth-protected-resource'],
    ['GET', '/.well-known/oauth-authorization-server'],
    ['POST', '/oauth2/register'],
    ['GET', '/oauth2/authorize'],
    ['POST', '/oauth2/token'],
    ['POST', '/oauth2/revoke'],
    ['GET', '/login/callback'],
    ['GET', '/me'],
    ['GET', '/oauth/start/osl_aaaaaaaaaaaaaaaaaaaa'],
  ])('%s %s answers 404', async (method, path) => {
    const reply = await call(server.url, method, path);
    expect([reply.status, reply.body]).toEqual([404, NOT_FOUND]);
  });

  it('/mcp without credentials answers 401 with a bare Bearer challenge, as before', async () => {
    const response = await mcpRequest(server.url);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
  });
});

describeBackends('MCP sign-in discovery and registration', (backend) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer(backend.name, { env: LOGIN_ENV, ownPublicUrl: true });
  });
  afterAll(() => server.close());

  const resourceMetadata = () => ({
    resource: `${server.url}/mcp`,
    authorization_servers: [server.url],
    scopes_supported: ['tools:execute'],
    bearer_methods_supported: ['header'],
    resource_name: 'toolgate',
  });

  it.each(['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource'])(
    '%s is the RFC 9728 document of /mcp',
    async (path) => {
      const reply = await call(server.url, 'GET', path);
      expect([reply.status, reply.body]).toEqual([200, resourceMetadata()]);
      expect(reply.headers.get('access-control-allow-origin')).toBe('*');
    },
  );

  it('/.well-known/oauth-authorization-server is the RFC 8414 document', async () => {
    const reply = await call(server.url, 'GET', '/.well-known/oauth-authorization-server');
    expect([reply.status, reply.body]).toEqual([
      200,
      {
        issuer: server.url,
        authorization_endpoint: `${server.url}/oauth2/authorize`,
        token_endpoint: `${server.url}/oauth2/token`,
        registration_endpoint: `${server.url}/oauth2/register`,
        revocation_endpoint: `${server.url}/oauth2/revoke`,
        scopes_supported: ['tools:execute'],
        response_types_supported: ['code'],
        response_modes_supported: ['query'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        token_endpoint_auth_methods_supported: ['none'],
        revocation_endpoint_auth_methods_supported: ['none'],
        code_challenge_methods_supported: ['S256'],
        client_id_metadata_document_supported: true,
        authorization_response_iss_parameter_supported: true,
      },
    ]);
  });

  it('/mcp without credentials (or with a wrong one) names the resource metadata', async () => {
    for (const headers of [{}, { authorization: 'Bearer tg_key_nope' }] as Record<string, string>[]) {
      const response = await mcpRequest(server.url, headers);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe(
        `Bearer resource_metadata="${server.url}/.well-known/oauth-protected-resource/mcp"`,
      );
      expect(await response.json()).toEqual({
        ok: false,
        error: 'invalid_api_key',
        message: 'The API key is missing, malformed, unknown or revoked.',
      });
    }
  });

  it('registers a public client, which becomes an AI client with those redirect URIs', async () => {
    const uris = [
      'http://127.0.0.1:33418/callback',
      'https://app.example/cb',
      'cursor://anysphere.cursor/oauth',
    ];
    const reply = await call(server.url, 'POST', '/oauth2/register', {
      body: {
        client_name: 'Claude',
        redirect_uris: uris,
        token_endpoint_auth_method: 'client_secret_basic',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        scope: 'tools:execute',
      },
    });
    expect(reply.status).toBe(201);
    expect(reply.headers.get('cache-control')).toBe('no-store');
    expect(reply.body).toEqual({
      client_id: expect.stringMatching(/^cli_[a-z0-9]{20}$/),
      client_id_issued_at: expect.any(Number),
      client_name: 'Claude',
      redirect_uris: uris,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    const clientId = reply.body.client_id as string;
    const listed = await call(server.url, 'GET', `/admin/clients/${clientId}/redirect-uris`, {
      key: server.adminKey,
    });
    expect([listed.status, [...listed.body.uris].sort()]).toEqual([200, [...uris].sort()]);
    const clients = await call(server.url, 'GET', '/admin/clients', { key: server.adminKey });
    expect(clients.body.clients).toContainEqual({ clientId, name: 'Claude', createdAt: expect.any(String) });
  });

  const refusals: Array<[string, unknown, string, string]> = [
    [
      'no redirect URIs',
      { client_name: 'x' },
      'invalid_redirect_uri',
      'redirect_uris must be an array of 1 to 20 URIs.',
    ],
    [
      'an empty list',
      { redirect_uris: [] },
      'invalid_redirect_uri',
      'redirect_uris must be an array of 1 to 20 URIs.',
    ],
    [
      'a relative URI',
      { redirect_uris: ['/cb'] },
      'invalid_redirect_uri',
      'A redirect URI must be an absolute URI.',
    ],
    [
      'http off loopback',
      { redirect_uris: ['http://app.example/cb'] },
      'invalid_redirect_uri',
      'A redirect URI must use https unless its host is loopback.',
    ],
    [
      'a javascript: URI',
      { redirect_uris: ['javascript:alert(1)'] },
      'invalid_redirect_uri',
      'A redirect URI must not use the javascript: scheme.',
    ],
    [
      'a fragment',
      { redirect_uris: ['https://app.example/cb#x'] },
      'invalid_redirect_uri',
      'A redirect URI must not have a fragment.',
    ],
    [
      'userinfo',
      { redirect_uris: ['https://u:p@app.example/cb'] },
      'invalid_redirect_uri',
      'A redirect URI must not carry userinfo.',
    ],
    [
      'a control character',
      { redirect_uris: ['https://app.example/c\u0001b'] },
      'invalid_redirect_uri',
      'A redirect URI must not contain control characters.',
    ],
    [
      'a client grant type',
      { redirect_uris: ['https://app.example/cb'], grant_types: ['client_credentials'] },
      'invalid_client_metadata',
      'grant_types may hold authorization_code and refresh_token.',
    ],
    [
      'an implicit response type',
      { redirect_uris: ['https://app.example/cb'], response_types: ['token'] },
      'invalid_client_metadata',
      'response_types may hold only code.',
    ],
    [
      'a name with a newline',
      { redirect_uris: ['https://app.example/cb'], client_name: 'a\nb' },
      'invalid_client_metadata',
      'client_name must be 1 to 200 characters.',
    ],
    ['an array body', [1], 'invalid_client_metadata', 'The body must be a JSON object of client metadata.'],
  ];

  it.each(refusals)(
    'refuses %s with its RFC 7591 error, storing nothing',
    async (_what, body, error, description) => {
      const before = await call(server.url, 'GET', '/admin/clients', { key: server.adminKey });
      const reply = await call(server.url, 'POST', '/oauth2/register', { body });
      expect([reply.status, reply.body]).toEqual([400, { error, error_description: description }]);
      const after = await call(server.url, 'GET', '/admin/clients', { key: server.adminKey });
      expect(after.body.clients).toEqual(before.body.clients);
    },
  );

  it('refuses a body that is not JSON, or not application/json', async () => {
    const malformed = await call(server.url, 'POST', '/oauth2/register', {
      raw: '{"redirect_uris":',
      headers: { 'content-type': 'application/json' },
    });
    expect([malformed.status, malformed.body]).toEqual([
      400,
      { error: 'invalid_client_metadata', error_description: 'The body is not valid JSON.' },
    ]);
    const form = await call(server.url, 'POST', '/oauth2/register', {
      raw: 'redirect_uris=https://x.example/cb',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect([form.status, form.body]).toEqual([
      400,
      { error: 'invalid_client_metadata', error_description: 'The body must be application/json.' },
    ]);
  });
});
