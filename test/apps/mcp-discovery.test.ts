/**
 * Discovery of an MCP server's authorization server, the cases a real provider does not show
 * (docs/reference.md "Apps from MCP servers"): toolgate's Client ID Metadata Document when the
 * authorization server accepts those (and toolgate is served over https), and the refusals — an
 * endpoint over plain http off loopback, a server that offers no way to register — each a 400 at
 * `/auth/discover` with nothing stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMcpServer, type TestMcpServer } from '../support/mcp-upstream.ts';
import { call, startServer, type TestServer } from '../support/server.ts';

const PUBLIC_URL = 'https://toolgate.example';

/** An MCP server that is its own authorization server, with the metadata `metadata(origin)`. */
async function serverWithMetadata(
  metadata: (origin: string) => Record<string, unknown>,
): Promise<TestMcpServer> {
  const server: TestMcpServer = await startMcpServer({
    tools: [{ name: 'ping' }],
    intercept: (req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const answer = (body: unknown) => {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        return true;
      };
      if (path.startsWith('/.well-known/oauth-protected-resource')) {
        return answer({ resource: server.url, authorization_servers: [server.origin] });
      }
      if (path === '/.well-known/oauth-authorization-server') return answer(metadata(server.origin));
      if (path.startsWith('/.well-known/')) {
        res.writeHead(404).end();
        return true;
      }
      return false;
    },
  });
  return server;
}

describe('discovering the authorization server of an MCP server', () => {
  let toolgate: TestServer;
  const servers: TestMcpServer[] = [];

  beforeAll(async () => {
    toolgate = await startServer('pglite', { env: { PUBLIC_URL } });
  }, 60_000);

  afterAll(async () => {
    await Promise.all([toolgate?.close(), ...servers.map((server) => server.close())]);
  });

  const register = (appId: string, url: string) =>
    call(toolgate.url, 'PUT', `/admin/apps/${appId}`, {
      key: toolgate.adminKey,
      body: {
        provider: 'example.found',
        mcp: { url },
        auth: { type: 'oauth2', discover: true, scopes: ['read'] },
      },
    });

  const refused = (message: string) => ({
    ok: false,
    error: 'invalid_request',
    message: 'The app registration has problems.',
    issues: [{ path: '/auth/discover', message }],
  });

  it("registers by toolgate's Client ID Metadata Document, and serves that document", async () => {
    const found = await serverWithMetadata((origin) => ({
      issuer: origin,
      authorization_endpoint: `${origin}/authorize`,
      token_endpoint: `${origin}/token`,
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
      client_id_metadata_document_supported: true,
    }));
    servers.push(found);
    const put = await register('found', found.url);
    expect(put.status).toBe(200);
    const got = await call(toolgate.url, 'GET', '/admin/apps/found', { key: toolgate.adminKey });
    expect(got.body.auth).toEqual({
      type: 'oauth2',
      discover: true,
      authorizationUrl: `${found.origin}/authorize`,
      tokenUrl: `${found.origin}/token`,
      clientId: `${PUBLIC_URL}/.well-known/oauth-client`,
      scopes: ['read'],
      tokenAuthMethod: 'none',
      resource: found.url,
    });
    const document = await call(toolgate.url, 'GET', '/.well-known/oauth-client');
    expect(document.status).toBe(200);
    expect(document.body).toEqual({
      client_id: `${PUBLIC_URL}/.well-known/oauth-client`,
      client_name: 'toolgate',
      client_uri: PUBLIC_URL,
      redirect_uris: [`${PUBLIC_URL}/handleOAuthCallback`],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
  });

  it('refuses an authorization server whose endpoints are plain http off loopback', async () => {
    const plain = await serverWithMetadata((origin) => ({
      issuer: origin,
      authorization_endpoint: 'http://auth.example/authorize',
      token_endpoint: `${origin}/token`,
      response_types_supported: ['code'],
      client_id_metadata_document_supported: true,
    }));
    servers.push(plain);
    const put = await register('plain', plain.url);
    expect(put.status).toBe(400);
    expect(put.body).toEqual(
      refused(
        'Its authorization_endpoint is not https (plain http is only accepted on loopback): http://auth.example/authorize',
      ),
    );
    expect((await call(toolgate.url, 'GET', '/admin/apps/plain', { key: toolgate.adminKey })).status).toBe(
      404,
    );
  });

  it('refuses an authorization server without S256, or without a way to register', async () => {
    const noPkce = await serverWithMetadata((origin) => ({
      issuer: origin,
      authorization_endpoint: `${origin}/authorize`,
      token_endpoint: `${origin}/token`,
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['plain'],
    }));
    const closed = await serverWithMetadata((origin) => ({
      issuer: origin,
      authorization_endpoint: `${origin}/authorize`,
      token_endpoint: `${origin}/token`,
      response_types_supported: ['code'],
    }));
    servers.push(noPkce, closed);
    const pkce = await register('nopkce', noPkce.url);
    expect(pkce.status).toBe(400);
    expect(pkce.body).toEqual(refused('The authorization server does not support PKCE with S256.'));
    const none = await register('closed', closed.url);
    expect(none.status).toBe(400);
    expect(none.body).toEqual(
      refused(
        "The authorization server offers neither dynamic client registration nor Client ID Metadata Documents (or toolgate's PUBLIC_URL is not https): register the app with explicit endpoints and a client of your own.",
      ),
    );
  });

  it('refuses discovery for an app from an OpenAPI document', async () => {
    const put = await call(toolgate.url, 'PUT', '/admin/apps/doc', {
      key: toolgate.adminKey,
      body: {
        provider: 'example.doc',
        baseUrl: 'https://a.example',
        openapi: {
          openapi: '3.1.0',
          info: { title: 'd', version: '1' },
          paths: { '/d': { get: { operationId: 'd', responses: { 200: { description: 'd' } } } } },
        },
        auth: { type: 'oauth2', discover: true },
      },
    });
    expect(put.status).toBe(400);
    expect(put.body.issues).toEqual([
      {
        path: '/auth/discover',
        message: 'Discovery is for apps from MCP servers; an OpenAPI app names its OAuth endpoints.',
      },
    ]);
  });
});
