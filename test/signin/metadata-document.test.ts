/**
 * Client ID Metadata Documents (docs/reference.md "MCP sign-in"): a client_id that is a URL names
 * the client's JSON document. The SDK client signs in with one (its client information is the URL,
 * as a CIMD client's is); and the fetch is fenced: https only (http loopback under
 * CIMD_ALLOW_HTTP_LOOPBACK=1, as here), no private, loopback or reserved address (also when a name
 * resolves to one), at most 5 KB, at most 5 s, no redirects, the document naming itself — each
 * refusal is 400 invalid_client at /oauth2/authorize, and stores nothing.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeBackends } from '../support/db.ts';
import {
  authorizeUrl,
  MemoryOAuthProvider,
  pkcePair,
  type SigninWorld,
  startSigninWorld,
  TEST_REDIRECT,
} from '../support/signin.ts';

describeBackends('Client ID Metadata Documents', (backend) => {
  let world: SigninWorld;
  let documents: Server;
  let base: string;
  const fetched: string[] = [];

  beforeAll(async () => {
    world = await startSigninWorld(backend.name);
    documents = createServer((req, res) => {
      fetched.push(req.url ?? '');
      const json = (body: unknown) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.url === '/client.json')
        return json({
          client_id: `${base}/client.json`,
          client_name: 'Doc Client',
          redirect_uris: [TEST_REDIRECT],
        });
      if (req.url === '/other.json')
        return json({
          client_id: `${base}/client.json`,
          client_name: 'Liar',
          redirect_uris: [TEST_REDIRECT],
        });
      if (req.url === '/big.json') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(`{"client_id":"${base}/big.json","pad":"${'x'.repeat(10 * 1024 * 1024)}"}`);
        return;
      }
      if (req.url === '/redirect.json') {
        res.writeHead(302, { location: '/client.json' });
        return res.end();
      }
      if (req.url === '/slow.json') {
        const timer = setTimeout(
          () => json({ client_id: `${base}/slow.json`, redirect_uris: [TEST_REDIRECT] }),
          8_000,
        );
        res.on('close', () => clearTimeout(timer));
        return;
      }
      res.writeHead(404);
      res.end();
    });
    await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(documents.address() as AddressInfo).port}`;
  }, 120_000);
  afterAll(async () => {
    documents?.closeAllConnections();
    documents?.close();
    await world?.close();
  });

  it('the SDK client signs in with a metadata document URL as its client_id', async () => {
    const clientId = `${base}/client.json`;
    const oauth = new MemoryOAuthProvider({ client: { client_id: clientId }, redirectUrl: TEST_REDIRECT });
    const transport = new StreamableHTTPClientTransport(new URL('/mcp', world.url), { authProvider: oauth });
    const client = new Client({ name: 'cimd', version: '1' });
    await expect(client.connect(transport)).rejects.toThrow();
    expect(oauth.authorizationUrl?.searchParams.get('client_id')).toBe(clientId);

    const browser = world.browser('ada');
    const page = await browser.open(oauth.authorizationUrl as URL);
    expect(page.kind === 'page' && page.html).toContain(
      '<strong>Doc Client</strong> asks to use toolgate as you',
    );
    expect(page.kind === 'page' && page.html).toContain(`Client: <code>${clientId}</code>`);
    const back = await browser.decide(page, 'approve');
    if (back.kind !== 'left') throw new Error('no redirect back');
    await transport.finishAuth(back.url.searchParams.get('code') as string);

    const again = new Client({ name: 'cimd', version: '1' });
    await again.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', world.url), { authProvider: oauth }),
    );
    expect((await again.listTools()).tools.length).toBeGreaterThan(0);
    await again.close();
    // Fetched once: the authorize step read the document, the token step the stored client.
    expect(fetched.filter((path) => path === '/client.json')).toHaveLength(1);
  }, 60_000);

  const refusals: Array<[string, () => string, string]> = [
    [
      'https on 127.0.0.1',
      () => 'https://127.0.0.1/client.json',
      'the client_id URL names a private or reserved address',
    ],
    [
      'https on 10.x',
      () => 'https://10.1.2.3/client.json',
      'the client_id URL names a private or reserved address',
    ],
    [
      'https on [::1]',
      () => 'https://[::1]/client.json',
      'the client_id URL names a private or reserved address',
    ],
    [
      'https on 169.254.169.254',
      () => 'https://169.254.169.254/latest/meta-data',
      'the client_id URL names a private or reserved address',
    ],
    ['http off loopback', () => 'http://10.1.2.3/client.json', 'the client_id URL must use https'],
    // A name is judged by what it resolves to, when connecting (DNS rebinding gains nothing).
    [
      'a name that resolves to loopback',
      () => 'https://localhost/client.json',
      'the client_id URL resolves to a private or reserved address',
    ],
    ['a root path', () => 'https://client.example', 'the client_id URL must be written in its normal form'],
    [
      'a document of 10 MB',
      () => `${base}/big.json`,
      'the client metadata document is larger than 5120 bytes',
    ],
    ['a redirect', () => `${base}/redirect.json`, 'the client metadata document answered 302'],
    [
      'a document naming another client',
      () => `${base}/other.json`,
      'the client metadata document names another client_id',
    ],
    ['a missing document', () => `${base}/missing.json`, 'the client metadata document answered 404'],
  ];

  it.each(refusals)('refuses %s with 400 invalid_client, storing nothing', async (_what, url, reason) => {
    const prisma = world.harness.server.app.deps.db.prisma;
    const before = await prisma.signinClient.count();
    const response = await fetch(authorizeUrl(world.url, url(), pkcePair().challenge), {
      redirect: 'manual',
    });
    expect([response.status, await response.json()]).toEqual([
      400,
      { error: 'invalid_client', error_description: `Client ID Metadata Document refused: ${reason}.` },
    ]);
    expect(await prisma.signinClient.count()).toBe(before);
  });

  it('gives up on a document that takes more than 5 s', async () => {
    const started = performance.now();
    const response = await fetch(authorizeUrl(world.url, `${base}/slow.json`, pkcePair().challenge), {
      redirect: 'manual',
    });
    const tookMs = performance.now() - started;
    expect([response.status, await response.json()]).toEqual([
      400,
      {
        error: 'invalid_client',
        error_description:
          'Client ID Metadata Document refused: the client metadata document did not arrive within 5000 ms.',
      },
    ]);
    expect(tookMs).toBeGreaterThan(4_900);
    expect(tookMs).toBeLessThan(7_500);
  }, 30_000);
});
