/**
 * The DNS-rebinding defence of /mcp (docs/reference.md "MCP", contract §9) by Origin: a browser
 * Origin is admitted when it is PUBLIC_URL's, listed in MCP_ALLOWED_ORIGINS, or — only on a server
 * that listens on loopback — an http origin of localhost, 127.0.0.1 or [::1] on any port. Every
 * other Origin answers 403 with the JSON-RPC error, before the key is even read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Agent, agentHeaders, provisionAgent } from '../support/agent.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { rawMcp } from './world.ts';

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'origin-test', version: '1' },
  },
});

const REFUSED = {
  jsonrpc: '2.0',
  error: { code: -32000, message: 'This Origin may not call /mcp (MCP_ALLOWED_ORIGINS).' },
  id: null,
};

/** The status of an initialize with this Origin, and the body when refused. */
async function withOrigin(baseUrl: string, agent: Agent, origin: string) {
  const reply = await rawMcp(baseUrl, INITIALIZE, { ...agentHeaders(agent), origin });
  return { status: reply.status, body: reply.status === 403 ? reply.json : undefined };
}

const ACCEPTED = { status: 200, body: undefined };
const FORBIDDEN = { status: 403, body: REFUSED };

describe('MCP Origin check', () => {
  describe('on a server listening on loopback', () => {
    let server: TestServer;
    let agent: Agent;

    beforeAll(async () => {
      server = await startServer('pglite', { env: { MCP_ALLOWED_ORIGINS: 'https://console.example' } });
      agent = await provisionAgent(server, ['tools:execute']);
    });
    afterAll(async () => {
      await server?.close();
    });

    it('admits http loopback origins on any port, PUBLIC_URL and the listed origins', async () => {
      const admitted = [
        'http://localhost',
        'http://localhost:6274',
        'http://127.0.0.1:1',
        'http://[::1]:65535',
        new URL(server.url).origin,
        'https://console.example',
      ];
      for (const origin of admitted) {
        expect({ origin, ...(await withOrigin(server.url, agent, origin)) }).toEqual({ origin, ...ACCEPTED });
      }
    });

    it('refuses every other origin with 403', async () => {
      const refused = [
        'https://localhost:6274',
        'http://localhost.evil.example:3000',
        'http://127.0.0.2:3000',
        'http://evil.example',
        'https://console.example:8443',
        'null',
        'not an origin',
      ];
      for (const origin of refused) {
        expect({ origin, ...(await withOrigin(server.url, agent, origin)) }).toEqual({
          origin,
          ...FORBIDDEN,
        });
      }
    });
  });

  describe('on a server listening on every interface', () => {
    let server: TestServer;
    let agent: Agent;
    let publicUrl: string;

    beforeAll(async () => {
      // PUBLIC_URL names 127.0.0.1, so this test still talks only to loopback; HOST is what counts.
      const started = await startServer('pglite', { ownPublicUrl: true, env: { HOST: '0.0.0.0' } });
      publicUrl = new URL(started.url.replace('0.0.0.0', '127.0.0.1')).origin;
      server = { ...started, url: publicUrl };
      agent = await provisionAgent(server, ['tools:execute']);
    });
    afterAll(async () => {
      await server?.close();
    });

    it('admits only PUBLIC_URL: a loopback origin on another port is a foreign page', async () => {
      expect(await withOrigin(publicUrl, agent, publicUrl)).toEqual(ACCEPTED);
      for (const origin of ['http://localhost:6274', 'http://127.0.0.1:1', 'http://[::1]:8080']) {
        expect({ origin, ...(await withOrigin(publicUrl, agent, origin)) }).toEqual({ origin, ...FORBIDDEN });
      }
    });
  });
});
