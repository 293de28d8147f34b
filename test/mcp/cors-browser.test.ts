/**
 * A browser MCP client at an admitted origin really calls /mcp (docs/reference.md "MCP"): headless
 * Chromium loads a page from a second loopback HTTP server (another port, so another origin) whose
 * script fetches toolgate's /mcp with an API key — the agent headers make Chromium send a CORS
 * preflight first — and reads the answers' bodies and the headers it needs. A page at an origin
 * the server does not admit fails in the browser, and the server answered it 403. Both ways an
 * origin is admitted: the loopback rule (a server listening on loopback) and MCP_ALLOWED_ORIGINS
 * (a server on every interface, where the loopback rule does not apply). And with MCP sign-in on,
 * a page at any origin does what a browser public client does by fetch: discovery, registration,
 * token.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, HAS_CHROMIUM, launch } from '../console/browser.ts';
import { type Agent, provisionAgent, registerApp } from '../support/agent.ts';
import { startServer, type TestServer } from '../support/server.ts';

/** Sign-in settings whose provider is never contacted here (its discovery is lazy). */
const LOGIN_ENV = {
  LOGIN_OIDC_ISSUER: 'https://login.invalid',
  LOGIN_OIDC_CLIENT_ID: 'toolgate',
  LOGIN_OIDC_CLIENT_SECRET: 'login-client-secret-for-tests',
};

/** evil.test is 127.0.0.1 for this browser: a page there is a foreign origin on this machine. */
const FOREIGN_HOST = 'evil.test';

const PETS = {
  provider: 'acme.pets',
  auth: { type: 'none' },
  openapi: {
    openapi: '3.0.3',
    info: { title: 'Pets', version: '1' },
    servers: [{ url: 'https://pets.example' }],
    paths: {
      '/pets': {
        get: {
          operationId: 'listPets',
          summary: 'List pets',
          responses: { '200': { description: 'The pets' } },
        },
      },
    },
  },
};

/** A server of one blank page: where the MCP client's script runs, at its own origin. */
async function startPageServer(): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>a browser MCP client</title>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** What the page's script saw. */
interface PageOutcome {
  signedOut?: { status: number; wwwAuthenticate: string | null };
  initialize?: { status: number; requestId: string | null; protocolVersion: string };
  toolsList?: { status: number; names: string[] };
  failure?: string;
}

/**
 * Opens `pageUrl` and runs, in the page, what a browser MCP client does: a call without a key (the
 * 401 and its WWW-Authenticate), a 2025-11-25 `initialize` with the agent headers, then
 * `tools/list` — each a fetch() of `mcpUrl`; or the TypeError the browser raised.
 */
async function runClient(
  browser: Browser,
  pageUrl: string,
  mcpUrl: string,
  agent: Agent,
): Promise<PageOutcome> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(pageUrl);
    return await page.evaluate(
      async ({ mcpUrl, apiKey, clientId }) => {
        const rpc = async (method: string, params: unknown, headers: Record<string, string>) => {
          const response = await fetch(mcpUrl, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
              ...headers,
            },
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
          });
          const text = await response.text();
          // The 2025-era answer is one event of a stream: its data line is the JSON-RPC message.
          const data = text.startsWith('event:')
            ? (text.split('\n').find((line) => line.startsWith('data: ')) ?? '').slice(6)
            : text;
          return { response, message: JSON.parse(data) };
        };
        const agentHeaders = { authorization: `Bearer ${apiKey}`, 'x-service-client-id': clientId };
        const init = {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'browser-client', version: '1' },
        };
        try {
          const signedOut = await rpc('initialize', init, {});
          const initialize = await rpc('initialize', init, {
            ...agentHeaders,
            'x-request-id': 'browser-initialize',
          });
          const toolsList = await rpc(
            'tools/list',
            {},
            { ...agentHeaders, 'mcp-protocol-version': '2025-11-25' },
          );
          return {
            signedOut: {
              status: signedOut.response.status,
              wwwAuthenticate: signedOut.response.headers.get('www-authenticate'),
            },
            initialize: {
              status: initialize.response.status,
              requestId: initialize.response.headers.get('x-request-id'),
              protocolVersion: initialize.message.result.protocolVersion,
            },
            toolsList: {
              status: toolsList.response.status,
              names: toolsList.message.result.tools.map((tool: { name: string }) => tool.name),
            },
          };
        } catch (error) {
          return { failure: String(error) };
        }
      },
      { mcpUrl, apiKey: agent.apiKey, clientId: agent.clientId },
    );
  } finally {
    await context.close();
  }
}

const SUCCEEDED: PageOutcome = {
  signedOut: { status: 401, wwwAuthenticate: 'Bearer' },
  initialize: { status: 200, requestId: 'browser-initialize', protocolVersion: '2025-11-25' },
  toolsList: { status: 200, names: ['pets__listPets'] },
};
const BLOCKED: PageOutcome = { failure: 'TypeError: Failed to fetch' };

/** The /mcp requests the server answered (its request log lines), as `METHOD status`. */
function mcpAnswers(server: TestServer, from: number): string[] {
  return server.logs
    .slice(from)
    .map((line) => JSON.parse(line) as { msg?: string; path?: string; method?: string; status?: number })
    .filter((entry) => entry.msg === 'request' && entry.path === '/mcp')
    .map((entry) => `${entry.method} ${entry.status}`);
}

describe.skipIf(!HAS_CHROMIUM)('a browser MCP client in headless Chromium', () => {
  let browser: Browser;
  let pages: Awaited<ReturnType<typeof startPageServer>>;

  beforeAll(async () => {
    [browser, pages] = await Promise.all([
      launch([`--host-resolver-rules=MAP ${FOREIGN_HOST} 127.0.0.1`]),
      startPageServer(),
    ]);
  });
  afterAll(async () => {
    await Promise.all([browser?.close(), pages?.close()]);
  });

  describe('on a server listening on loopback', () => {
    let server: TestServer;
    let agent: Agent;

    beforeAll(async () => {
      server = await startServer('pglite');
      agent = await provisionAgent(server, ['tools:execute']);
      await registerApp(server, 'pets', PETS);
    });
    afterAll(async () => {
      await server?.close();
    });

    it('a page of another loopback port calls /mcp: preflight, 401, initialize, tools/list', async () => {
      const from = server.logs.length;
      const outcome = await runClient(browser, `http://127.0.0.1:${pages.port}/`, `${server.url}/mcp`, agent);
      expect(outcome).toEqual(SUCCEEDED);
      // Chromium asked first (the agent headers are not CORS-safelisted), and was admitted.
      expect(mcpAnswers(server, from)).toEqual(['OPTIONS 204', 'POST 401', 'POST 200', 'POST 200']);
    });

    it('a page of a foreign origin is blocked in the browser: the server answered it 403', async () => {
      const from = server.logs.length;
      const outcome = await runClient(
        browser,
        `http://${FOREIGN_HOST}:${pages.port}/`,
        `${server.url}/mcp`,
        agent,
      );
      expect(outcome).toEqual(BLOCKED);
      expect(mcpAnswers(server, from)).toEqual(['OPTIONS 403']);
    });
  });

  describe('on a server listening on every interface (PUBLIC_URL set), by MCP_ALLOWED_ORIGINS', () => {
    let server: TestServer;
    let agent: Agent;
    let mcpUrl: string;

    beforeAll(async () => {
      // PUBLIC_URL names 127.0.0.1, so the test still talks only to loopback; HOST is what counts.
      server = await startServer('pglite', {
        ownPublicUrl: true,
        env: { HOST: '0.0.0.0', MCP_ALLOWED_ORIGINS: `http://127.0.0.1:${pages.port}` },
      });
      mcpUrl = `${new URL(server.url.replace('0.0.0.0', '127.0.0.1')).origin}/mcp`;
      agent = await provisionAgent({ ...server, url: new URL(mcpUrl).origin }, ['tools:execute']);
      await registerApp({ ...server, url: new URL(mcpUrl).origin }, 'pets', PETS);
    });
    afterAll(async () => {
      await server?.close();
    });

    it('the listed origin calls /mcp', async () => {
      const outcome = await runClient(browser, `http://127.0.0.1:${pages.port}/`, mcpUrl, agent);
      expect(outcome).toEqual(SUCCEEDED);
    });

    it('a loopback page not listed is a foreign page here: blocked, answered 403', async () => {
      const from = server.logs.length;
      const outcome = await runClient(browser, `http://localhost:${pages.port}/`, mcpUrl, agent);
      expect(outcome).toEqual(BLOCKED);
      expect(mcpAnswers(server, from)).toEqual(['OPTIONS 403']);
    });
  });

  describe('with MCP sign-in on: the fetches of a browser public client', () => {
    let server: TestServer;

    beforeAll(async () => {
      server = await startServer('pglite', { ownPublicUrl: true, env: LOGIN_ENV });
    });
    afterAll(async () => {
      await server?.close();
    });

    it('a page at any origin reads discovery, registers itself and reads the token endpoint', async () => {
      const context = await browser.newContext();
      try {
        const page = await context.newPage();
        await page.goto(`http://${FOREIGN_HOST}:${pages.port}/`);
        const outcome = await page.evaluate(
          async ({ issuer, redirectUri }) => {
            try {
              // As the MCP SDK asks: with MCP-Protocol-Version, which takes a preflight.
              const discovery = await fetch(`${issuer}/.well-known/oauth-authorization-server`, {
                headers: { 'mcp-protocol-version': '2025-11-25' },
              });
              const metadata = (await discovery.json()) as {
                registration_endpoint: string;
                token_endpoint: string;
              };
              const registration = await fetch(metadata.registration_endpoint, {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify({ redirect_uris: [redirectUri], client_name: 'web client' }),
              });
              const client = (await registration.json()) as { client_id: string; redirect_uris: string[] };
              const token = await fetch(metadata.token_endpoint, {
                method: 'POST',
                headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
                body: new URLSearchParams({
                  grant_type: 'refresh_token',
                  refresh_token: 'tg_rt_unknown',
                  client_id: client.client_id,
                }).toString(),
              });
              return {
                discovery: discovery.status,
                registration: [registration.status, client.redirect_uris],
                token: [token.status, ((await token.json()) as { error: string }).error],
              };
            } catch (error) {
              return { failure: String(error) };
            }
          },
          { issuer: server.url, redirectUri: 'https://web-client.example/callback' },
        );
        expect(outcome).toEqual({
          discovery: 200,
          registration: [201, ['https://web-client.example/callback']],
          token: [400, 'invalid_grant'],
        });
      } finally {
        await context.close();
      }
    });
  });
});

if (!HAS_CHROMIUM) {
  console.warn(
    `\n*** browser MCP client test SKIPPED: ${CHROMIUM} is missing (apt-get install chromium) ***\n`,
  );
}
