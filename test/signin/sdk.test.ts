/**
 * MCP sign-in end to end with the official SDK clients' own OAuth support (docs/reference.md "MCP
 * sign-in"): each client is given nothing but the URL of /mcp and an OAuthClientProvider; it finds
 * the metadata from the 401, registers itself (RFC 7591), sends the person to /oauth2/authorize,
 * where they sign in at the login provider (a real oidc-provider) and approve; the client redeems
 * the code, lists the tools, and calls a tool of the oauth2 app `demo` as `oidc:<sub>`, whose
 * grant arrives by URL elicitation. Refreshing rotates the tokens.
 */
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from '@modelcontextprotocol/client';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser } from '../support/browser.ts';
import { describeBackends } from '../support/db.ts';
import { MemoryOAuthProvider, type SigninWorld, startSigninWorld } from '../support/signin.ts';

describeBackends('MCP clients sign in with OAuth', (backend) => {
  let world: SigninWorld;

  /**
   * The person follows an authorization link in their signed-in browser: toolgate sends it on to
   * the app's provider, they consent there as `account`, and the callback stores the grant.
   */
  async function connectApp(browser: Browser, link: string, account: string) {
    const atProvider = await browser.open(link);
    if (atProvider.kind !== 'left')
      throw new Error(`expected the provider, got ${atProvider.status} ${atProvider.html}`);
    expect(atProvider.url.origin).toBe(world.harness.provider.issuer);
    const back = await world.harness.provider.authorize(atProvider.url.href, { account });
    const callback = await world.harness.callback(back);
    expect(callback.status).toBe(302);
  }

  beforeAll(async () => {
    world = await startSigninWorld(backend.name);
  }, 120_000);
  afterAll(() => world?.close());

  it('the v1 SDK client connects by URL, signs its user in, and calls a tool after connecting the app', async () => {
    const mcpUrl = new URL('/mcp', world.url);
    const oauth = new MemoryOAuthProvider();
    const connect = async () => {
      const client = new V1Client(
        { name: 'test-v1', version: '1.0.0' },
        { capabilities: { elicitation: { url: {} } } },
      );
      client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'cancel' as const }));
      const transport = new V1Transport(mcpUrl, { authProvider: oauth });
      return { client, transport, done: client.connect(transport) };
    };

    const first = await connect();
    await expect(first.done).rejects.toBeInstanceOf(UnauthorizedError);
    expect(oauth.client?.client_id).toMatch(/^cli_[a-z0-9]{20}$/);
    const authorizationUrl = oauth.authorizationUrl as URL;
    expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(`${world.url}/oauth2/authorize`);
    expect(authorizationUrl.searchParams.get('resource')).toBe(`${world.url}/mcp`);

    const ada = world.browser('ada');
    const back = await ada.authorize(authorizationUrl);
    expect(back.origin + back.pathname).toBe(oauth.redirectUrl);
    expect(back.searchParams.get('iss')).toBe(world.url);
    expect(back.searchParams.get('state')).toBe(authorizationUrl.searchParams.get('state'));
    await first.transport.finishAuth(back.searchParams.get('code') as string);
    expect(oauth.saved).toEqual({
      access_token: expect.stringMatching(/^tg_at_/),
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: expect.stringMatching(/^tg_rt_/),
      scope: 'tools:execute',
      issuer: world.url,
    });

    const second = await connect();
    await second.done;
    const { tools } = await second.client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('demo__getMe');

    // The app needs Ada's own grant: the 2025-era client gets the -32042 URL elicitation.
    const needsGrant = await second.client.callTool({ name: 'demo__getMe', arguments: {} }).then(
      () => undefined,
      (error: unknown) => error as { code?: number; data?: { elicitations?: Array<{ url: string }> } },
    );
    expect(needsGrant?.code).toBe(-32042);
    const url = needsGrant?.data?.elicitations?.[0]?.url as string;
    expect(url).toMatch(new RegExp(`^${world.url}/oauth/start/osl_[a-z0-9]{20}$`));

    // The link is Ada's: another signed-in person is refused, nobody signed in must sign in first.
    const mallory = world.browser('mallory');
    await mallory.authorize(authorizationUrl.href.replace(/state=[^&]*/, 'state=m')).catch(() => undefined);
    const stolen = await mallory.open(url);
    expect(
      stolen.kind === 'page' && [
        stolen.status,
        stolen.html.includes('This link was made for another person'),
      ],
    ).toEqual([403, true]);
    const anonymous = await fetch(url, { redirect: 'manual' });
    expect(anonymous.status).toBe(302);
    expect(new URL(anonymous.headers.get('location') as string).origin).toBe(world.login.issuer);
    expect(await world.harness.server.app.deps.db.prisma.connection.count()).toBe(0);

    await connectApp(ada, url, 'ada-at-demo');

    const result = await second.client.callTool({ name: 'demo__getMe', arguments: {} });
    expect(result.isError).toBeUndefined();
    expect((result.structuredContent as { data: unknown }).data).toEqual({ id: 'user-1', name: 'Ada' });

    // The grant belongs to (this client, oidc:ada): the person's connection across the service.
    const rows = await world.harness.server.app.deps.db.prisma.connection.findMany({
      select: { clientId: true, userId: true, appId: true },
    });
    expect(rows).toEqual([{ clientId: oauth.client?.client_id, userId: 'oidc:ada', appId: 'demo' }]);

    // Ada's own page lists it, and its button disconnects it (Mallory's page shows nothing of Ada's).
    const mine = await ada.open(`${world.url}/me`);
    if (mine.kind !== 'page') throw new Error('no /me page');
    expect(mine.status).toBe(200);
    expect(mine.html).toContain('<td>demo</td><td>Test MCP client</td><td>active</td>');
    const theirs = await mallory.open(`${world.url}/me`);
    expect(theirs.kind === 'page' && theirs.html).toContain('You have connected no app yet.');
    const field = (name: string) =>
      new RegExp(`name="${name}" value="([^"]*)"`).exec(mine.html)?.[1] as string;
    const forged = await mallory.open(`${world.url}/me/disconnect`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: world.url },
      body: new URLSearchParams({
        client: field('client'),
        app: field('app'),
        form_token: field('form_token'),
      }).toString(),
    });
    expect(forged.kind === 'page' && forged.status).toBe(403);
    const removed = await ada.open(`${world.url}/me/disconnect`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: world.url },
      body: new URLSearchParams({
        client: field('client'),
        app: field('app'),
        form_token: field('form_token'),
      }).toString(),
    });
    expect(removed.kind === 'page' && removed.html).toContain('You have connected no app yet.');
    expect(await world.harness.server.app.deps.db.prisma.connection.count()).toBe(0);
    await second.client.close();
  }, 120_000);

  it('the v2 SDK client (2026-07-28) signs in and answers the URL elicitation itself', async () => {
    const oauth = new MemoryOAuthProvider({ redirectUrl: 'http://localhost:43117/cb' });
    const elicited: string[] = [];
    const grace = world.browser('grace');
    const connect = async () => {
      const client = new V2Client(
        { name: 'test-v2', version: '1.0.0' },
        { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
      );
      client.setRequestHandler('elicitation/create', async (request) => {
        const { url } = request.params as { url: string };
        elicited.push(url);
        await connectApp(grace, url, 'grace-at-demo');
        return { action: 'accept' as const };
      });
      const transport = new V2Transport(new URL('/mcp', world.url), { authProvider: oauth });
      return { client, transport, done: client.connect(transport) };
    };
    const first = await connect();
    // 2026-07-28 has no handshake: the first call meets the 401 and sends the person to sign in.
    const refused = await first.done
      .then(() => first.client.callTool({ name: 'demo__getMe', arguments: {} }))
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(Error);
    expect(oauth.authorizationUrl?.pathname).toBe('/oauth2/authorize');
    const back = await grace.authorize(oauth.authorizationUrl as URL);
    await first.transport.finishAuth(back.searchParams);

    const second = await connect();
    await second.done;
    const result = await second.client.callTool({ name: 'demo__getMe', arguments: {} });
    expect(elicited).toEqual([expect.stringMatching(new RegExp(`^${world.url}/oauth/start/osl_`))]);
    expect((result.structuredContent as { data: unknown }).data).toEqual({ id: 'user-1', name: 'Ada' });
    await second.client.close();
  }, 120_000);
});
