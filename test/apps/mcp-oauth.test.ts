/**
 * An MCP server that requires OAuth from a real authorization server (oidc-provider), registered
 * with `{ type: "oauth2", discover: true }` (docs/reference.md "Apps from MCP servers"): toolgate
 * reads the server's protected-resource metadata, the authorization server's metadata, registers
 * itself dynamically, and each end user's calls carry that user's own token for the server
 * (`resource` = the server's URL) — never another user's, never passed to or from the agent.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Agent, agentHeaders, asAgent, provisionAgent, proxy, userHeader } from '../support/agent.ts';
import { describeBackends } from '../support/db.ts';
import { startMcpServer, type TestMcpServer } from '../support/mcp-upstream.ts';
import { type OAuthProviderFixture, startOAuthProvider } from '../support/oauth-provider.ts';
import { call, type Reply, startServer, type TestServer } from '../support/server.ts';

const CLIENT_REDIRECT = 'https://agent.example/oauth/done';

describeBackends('an MCP server behind OAuth, discovered', (backend) => {
  let server: TestServer;
  let second: TestServer | undefined;
  let provider: OAuthProviderFixture;
  let tracker: TestMcpServer;
  let agent: Agent;
  const replies: Reply[] = [];
  /** Accounts whose tokens the MCP server refuses however fresh (it wants them to authorize again). */
  const refusedAccounts = new Set<string>();

  beforeAll(async () => {
    server = await startServer(backend.name, { ownPublicUrl: true });
    provider = await startOAuthProvider({
      redirectUri: `${server.url}/handleOAuthCallback`,
      registration: true,
      accessTokenTtl: 600,
    });
    tracker = await startMcpServer({
      tools: [
        {
          name: 'my_issues',
          title: 'My issues',
          description: 'Lists the issues assigned to the signed-in user.',
          inputSchema: { type: 'object', properties: {} },
          run: async (_args, token) => {
            const account = token ? await provider.accountOf(token) : undefined;
            return { content: [], structuredContent: { assignee: account, issues: [`${account}-1`] } };
          },
        },
      ],
      intercept: async (req, res, body) => {
        const path = new URL(req.url ?? '/', 'http://x').pathname;
        if (req.method === 'GET' && path.startsWith('/.well-known/oauth-protected-resource')) {
          res.writeHead(200, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              resource: tracker.url,
              authorization_servers: [provider.issuer],
              scopes_supported: ['profile:read'],
              bearer_methods_supported: ['header'],
            }),
          );
          return true;
        }
        // Anyone may connect and list the tools; a call needs a valid token of this server.
        if ((body as { method?: string } | undefined)?.method !== 'tools/call') return false;
        const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
        const account = token ? await provider.accountOf(token) : undefined;
        if (account !== undefined && !refusedAccounts.has(account)) return false;
        res
          .writeHead(401, {
            'content-type': 'application/json',
            'www-authenticate': `Bearer resource_metadata="${tracker.origin}/.well-known/oauth-protected-resource/mcp"`,
          })
          .end('{"error":"invalid_token"}');
        return true;
      },
    });
    agent = await provisionAgent(server, undefined, { redirectUri: CLIENT_REDIRECT });
  }, 120_000);

  afterAll(async () => {
    const secrets = provider?.secrets() ?? [];
    for (const reply of replies) for (const secret of secrets) expect(reply.text).not.toContain(secret);
    await Promise.all([second?.close(), server?.close(), provider?.close(), tracker?.close()]);
  });

  const as = (userId: string) => asAgent(agent, userHeader(userId));
  const record = (reply: Reply) => {
    replies.push(reply);
    return reply;
  };

  /** The user connects the app through /initiateOAuth and the provider (as `account`). */
  async function connect(userId: string, account = userId) {
    const started = record(
      await call(server.url, 'POST', '/initiateOAuth', {
        ...asAgent(agent),
        body: { appId: 'tracker', userId, clientRedirectUri: CLIENT_REDIRECT },
      }),
    );
    expect(started.status).toBe(200);
    const authorizationUrl = new URL(started.body.authorizationUrl);
    expect(authorizationUrl.searchParams.get('resource')).toBe(tracker.url);
    const back = await provider.authorize(started.body.authorizationUrl, { account });
    const callback = await fetch(new URL(back.pathname + back.search, server.url), { redirect: 'manual' });
    expect(callback.status).toBe(302);
    expect(callback.headers.get('location')).toBe(`${CLIENT_REDIRECT}?status=success`);
  }

  it('registers from discovery: endpoints of the authorization server, toolgate registered dynamically', async () => {
    const put = record(
      await call(server.url, 'PUT', '/admin/apps/tracker', {
        key: server.adminKey,
        body: {
          provider: 'example.tracker',
          mcp: { url: tracker.url },
          auth: { type: 'oauth2', discover: true },
        },
      }),
    );
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ appId: 'tracker', tools: ['my_issues'], skipped: [] });
    const got = record(await call(server.url, 'GET', '/admin/apps/tracker', { key: server.adminKey }));
    expect(got.body.auth).toEqual({
      type: 'oauth2',
      discover: true,
      authorizationUrl: `${provider.issuer}/auth`,
      tokenUrl: `${provider.issuer}/token`,
      revocationUrl: `${provider.issuer}/token/revocation`,
      clientId: expect.any(String),
      scopes: ['profile:read'],
      tokenAuthMethod: 'client_secret_basic',
      issuer: provider.issuer,
      resource: tracker.url,
    });
    expect(got.body.auth.clientId).not.toBe(provider.clientId);
    const tools = record(await call(server.url, 'GET', '/tools?appId=tracker', asAgent(agent)));
    expect(tools.body.tools[0]).toMatchObject({
      toolId: 'tracker:::my_issues',
      requiresUserAuth: true,
      scopes: [],
    });
  });

  it('a user without a grant gets auth_required; after consent each user sees only their own data', async () => {
    const before = record(
      await proxy(server, agent, { toolId: 'tracker:::my_issues', parameters: {} }, userHeader('ada')),
    );
    expect(before.status).toBe(401);
    expect(before.body).toEqual({
      ok: false,
      error: 'auth_required',
      message: 'This tool needs the user to authorize the app first.',
      auth_endpoint: '/initiateOAuth',
      app_id: 'tracker',
    });
    await connect('ada');
    await connect('grace');
    for (const user of ['ada', 'grace']) {
      const reply = record(
        await proxy(server, agent, { toolId: 'tracker:::my_issues', parameters: {} }, userHeader(user)),
      );
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({
        ok: true,
        data: { assignee: user, issues: [`${user}-1`] },
        meta: {
          tool_id: 'tracker:::my_issues',
          duration_ms: expect.any(Number),
          provider: 'example.tracker',
        },
      });
    }
    // The tokens the server saw were the users' own, issued for the server's URL.
    const calls = tracker.received.filter((r) => r.method === 'tools/call' && r.token);
    expect(new Set(await Promise.all(calls.map((r) => provider.accountOf(r.token as string))))).toEqual(
      new Set(['ada', 'grace']),
    );
  });

  it('a 401 to a token toolgate believed valid refreshes once and retries; a dead grant answers reauth_required', async () => {
    await provider.revokeAccessTokens('ada');
    const refreshesBefore = provider.counts.refresh_token;
    const retried = record(
      await proxy(server, agent, { toolId: 'tracker:::my_issues', parameters: {} }, userHeader('ada')),
    );
    expect(retried.status).toBe(200);
    expect(retried.body.data).toEqual({ assignee: 'ada', issues: ['ada-1'] });
    expect(provider.counts.refresh_token).toBe(refreshesBefore + 1);

    await provider.revokeGrants('ada');
    const dead = record(
      await proxy(server, agent, { toolId: 'tracker:::my_issues', parameters: {} }, userHeader('ada')),
    );
    expect(dead.status).toBe(401);
    expect(dead.body).toEqual({
      ok: false,
      error: 'auth_required',
      message: 'The stored authorization can no longer be refreshed; the user must authorize again.',
      auth_endpoint: '/initiateOAuth',
      app_id: 'tracker',
      reauth_required: true,
    });
    const listed = record(await call(server.url, 'GET', '/connections?appId=tracker', as('ada')));
    expect(listed.body.connections.map((c: { status: string }) => c.status)).toEqual(['reauth_required']);
  });

  it('a server that refuses a freshly refreshed token too: reauth_required, and the grant is marked', async () => {
    await connect('zed');
    refusedAccounts.add('zed');
    const refreshesBefore = provider.counts.refresh_token;
    const reply = record(
      await proxy(server, agent, { toolId: 'tracker:::my_issues', parameters: {} }, userHeader('zed')),
    );
    expect(reply.status).toBe(401);
    expect(reply.body).toEqual({
      ok: false,
      error: 'auth_required',
      message: 'The stored authorization can no longer be refreshed; the user must authorize again.',
      auth_endpoint: '/initiateOAuth',
      app_id: 'tracker',
      reauth_required: true,
    });
    expect(provider.counts.refresh_token).toBe(refreshesBefore + 1);
    const listed = record(await call(server.url, 'GET', '/connections?appId=tracker', as('zed')));
    expect(listed.body.connections.map((c: { status: string }) => c.status)).toEqual(['reauth_required']);
  });

  it('over MCP, a user authorizes through URL elicitation and the call then runs once', async () => {
    const elicited: string[] = [];
    const client = new Client(
      { name: 'assistant', version: '1.0.0' },
      { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    client.setRequestHandler('elicitation/create', async (request) => {
      const { url } = request.params as { url: string };
      elicited.push(url);
      const back = await provider.authorize(url, { account: 'lin' });
      await fetch(new URL(back.pathname + back.search, server.url), { redirect: 'manual' });
      return { action: 'accept' as const };
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp?apps=tracker', server.url), {
        requestInit: { headers: agentHeaders(agent, 'lin') },
      }),
    );
    try {
      const result = await client.callTool({ name: 'tracker__my_issues', arguments: {} });
      expect(elicited).toHaveLength(1);
      expect(new URL(elicited[0] as string).searchParams.get('resource')).toBe(tracker.url);
      expect(result.structuredContent).toEqual({
        ok: true,
        data: { assignee: 'lin', issues: ['lin-1'] },
        meta: {
          tool_id: 'tracker:::my_issues',
          duration_ms: expect.any(Number),
          provider: 'example.tracker',
        },
      });
    } finally {
      await client.close();
    }
  });

  it('disconnecting revokes the grant at the authorization server', async () => {
    const before = provider.counts.revocation;
    const removed = record(await call(server.url, 'DELETE', '/connections/tracker', as('grace')));
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ ok: true });
    expect(provider.counts.revocation).toBeGreaterThan(before);
    const after = record(
      await proxy(server, agent, { toolId: 'tracker:::my_issues', parameters: {} }, userHeader('grace')),
    );
    expect(after.status).toBe(401);
    expect(after.body.error).toBe('auth_required');
  });

  describe.runIf(backend.name === 'postgres')('two servers on one database', () => {
    it('a grant made through one server serves calls on the other', async () => {
      second = await startServer(backend.name, { databaseUrl: server.databaseUrl });
      await connect('mo');
      const reply = record(
        await call(second.url, 'POST', '/proxyV2', {
          ...as('mo'),
          body: { toolId: 'tracker:::my_issues', parameters: {} },
        }),
      );
      expect(reply.status).toBe(200);
      expect(reply.body.data).toEqual({ assignee: 'mo', issues: ['mo-1'] });
    });
  });
});
