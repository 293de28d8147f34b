/**
 * MCP sign-in on two servers sharing one PostgreSQL and one PUBLIC_URL (docs/reference.md "MCP
 * sign-in"): every step may land on either server. The SDK client's requests alternate between
 * them (a fetch that sends each request to the next server), so registration, the token exchange,
 * refresh and /mcp each run where the previous step did not; a revocation on one is seen by the
 * other within 5 s.
 */
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasPostgres } from '../support/db.ts';
import {
  authorizeUrl,
  MemoryOAuthProvider,
  pkcePair,
  postForm,
  registerClient,
  type SigninWorld,
  startSigninWorld,
  TEST_REDIRECT,
} from '../support/signin.ts';

const mcpList = (url: string, token: string) =>
  fetch(new URL('/mcp', url), {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });

describe.runIf(hasPostgres())('MCP sign-in across two servers on one PostgreSQL', () => {
  let a: SigninWorld;
  let b: SigninWorld;
  beforeAll(async () => {
    a = await startSigninWorld('postgres');
    b = await startSigninWorld('postgres', { share: a });
  }, 120_000);
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('the SDK client signs in and calls a tool with every step on alternating servers', async () => {
    const servers = [a.harness.server.url, b.harness.server.url];
    const seen: string[] = [];
    let turn = 0;
    const alternate: typeof fetch = (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.origin === a.url) {
        const target = servers[turn++ % 2] as string;
        seen.push(`${url.pathname} → ${target === servers[0] ? 'a' : 'b'}`);
        const moved = new URL(url.pathname + url.search, target);
        return input instanceof Request ? fetch(new Request(moved, input), init) : fetch(moved, init);
      }
      return fetch(input, init);
    };
    const oauth = new MemoryOAuthProvider();
    const connect = () => {
      const client = new Client(
        { name: 'cluster', version: '1' },
        { capabilities: { elicitation: { url: {} } } },
      );
      client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'cancel' as const }));
      const transport = new StreamableHTTPClientTransport(new URL('/mcp', a.url), {
        authProvider: oauth,
        fetch: alternate,
      });
      return { client, transport, done: client.connect(transport) };
    };
    const first = connect();
    await expect(first.done).rejects.toBeInstanceOf(UnauthorizedError);
    const ada = b.browser('ada');
    const back = await ada.authorize(oauth.authorizationUrl as URL);
    await first.transport.finishAuth(back.searchParams.get('code') as string);
    const second = connect();
    await second.done;
    const refused = await second.client.callTool({ name: 'demo__getMe', arguments: {} }).then(
      () => undefined,
      (error: { data?: { elicitations?: Array<{ url: string }> } }) => error,
    );
    // Ada's link, opened in her browser (signed in through the other server), leads to the provider.
    const atProvider = await ada.open(refused?.data?.elicitations?.[0]?.url as string);
    if (atProvider.kind !== 'left') throw new Error('the link did not lead to the provider');
    await a.harness.callback(
      await a.harness.provider.authorize(atProvider.url.href, { account: 'ada-at-demo' }),
    );
    const result = await second.client.callTool({ name: 'demo__getMe', arguments: {} });
    expect((result.structuredContent as { data: unknown }).data).toEqual({ id: 'user-1', name: 'Ada' });
    expect(seen.some((step) => step.startsWith('/oauth2/register'))).toBe(true);
    expect(seen.filter((step) => step.startsWith('/mcp')).map((step) => step.slice(-1))).toEqual(
      expect.arrayContaining(['a', 'b']),
    );
    await second.client.close();
  }, 120_000);

  it('a code made on one server is redeemed on the other, and a revocation there is seen here within 5 s', async () => {
    const clientId = await registerClient(a.harness.server.url);
    const pkce = pkcePair();
    const back = await a.browser('grace').authorize(authorizeUrl(a.url, clientId, pkce.challenge));
    const tokens = await postForm(b.harness.server.url, '/oauth2/token', {
      grant_type: 'authorization_code',
      code: back.searchParams.get('code') as string,
      redirect_uri: TEST_REDIRECT,
      code_verifier: pkce.verifier,
      client_id: clientId,
    });
    expect(tokens.status).toBe(200);
    expect((await mcpList(a.harness.server.url, tokens.body.access_token)).status).toBe(200);
    expect((await mcpList(b.harness.server.url, tokens.body.access_token)).status).toBe(200);
    const revoked = await postForm(b.harness.server.url, '/oauth2/revoke', {
      token: tokens.body.refresh_token,
      client_id: clientId,
    });
    expect(revoked.status).toBe(200);
    a.harness.clock.advance(5_000);
    expect((await mcpList(a.harness.server.url, tokens.body.access_token)).status).toBe(401);
  }, 60_000);
});
