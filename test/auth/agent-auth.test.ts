import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../server/clock.ts';
import { LIMITS } from '../../server/config.ts';
import { type Agent, provisionAgent } from '../support/agent.ts';
import { backends, describeBackends } from '../support/db.ts';
import { call, startServer, type TestServer } from '../support/server.ts';

const INVALID_API_KEY = {
  ok: false,
  error: 'invalid_api_key',
  message: 'The API key is missing, malformed, unknown or revoked.',
};
const INVALID_CLIENT = {
  ok: false,
  error: 'invalid_client',
  message: 'X-Service-Client-Id is missing, unknown, or not the client this key was issued to.',
};

describeBackends('agent authentication', (backend) => {
  let server: TestServer;
  let agent: Agent;
  let other: Agent;
  beforeAll(async () => {
    server = await startServer(backend.name);
    agent = await provisionAgent(server, ['tools:execute']);
    other = await provisionAgent(server, ['tools:execute'], { name: 'other' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('lets a key with its own client id in', async () => {
    const reply = await call(server.url, 'GET', '/tools', { key: agent.apiKey, clientId: agent.clientId });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ tools: [] });
  });

  it('reads the Bearer scheme case-insensitively (RFC 9110 §11.1), on agent and admin routes', async () => {
    for (const scheme of ['bearer', 'BEARER', 'BeArEr']) {
      const tools = await call(server.url, 'GET', '/tools', {
        headers: { authorization: `${scheme} ${agent.apiKey}`, 'x-service-client-id': agent.clientId },
      });
      expect([tools.status, tools.body]).toEqual([200, { tools: [] }]);
      const admin = await call(server.url, 'GET', '/admin/apps', {
        headers: { authorization: `${scheme} ${server.adminKey}` },
      });
      expect([admin.status, admin.body]).toEqual([200, { apps: [] }]);
    }
  });

  it.each([
    ['no Authorization header', { clientId: 'x' }],
    ['a Basic scheme', { headers: { authorization: 'Basic dXNlcjpwYXNz' } }],
    ['a lower-case bearer with nothing after it', { headers: { authorization: 'Bearer' } }],
    ['a malformed key', { key: 'not-a-key' }],
    ['an unknown key id', { key: `tg_key_${'z'.repeat(20)}_${'A'.repeat(43)}` }],
  ])('answers 401 invalid_api_key for %s', async (_label, options) => {
    const reply = await call(server.url, 'GET', '/tools', options);
    expect(reply.status).toBe(401);
    expect(reply.body).toEqual(INVALID_API_KEY);
  });

  it('answers 401 invalid_api_key for a known key id with a wrong secret', async () => {
    const forged =
      `${agent.apiKey.slice(0, -4)}AAAA` === agent.apiKey
        ? `${agent.apiKey.slice(0, -4)}BBBB`
        : `${agent.apiKey.slice(0, -4)}AAAA`;
    const reply = await call(server.url, 'GET', '/tools', { key: forged, clientId: agent.clientId });
    expect(reply.status).toBe(401);
    expect(reply.body).toEqual(INVALID_API_KEY);
  });

  it('answers 401 invalid_client when the client id is missing, unknown, or another client', async () => {
    for (const clientId of [undefined, 'cli_unknown', other.clientId, '']) {
      const reply = await call(server.url, 'GET', '/tools', { key: agent.apiKey, clientId });
      expect(reply.status).toBe(401);
      expect(reply.body).toEqual(INVALID_CLIENT);
    }
  });

  it('answers invalid_client to the bootstrap admin key on agent routes', async () => {
    const reply = await call(server.url, 'GET', '/tools', { key: server.adminKey, clientId: agent.clientId });
    expect(reply.status).toBe(401);
    expect(reply.body).toEqual(INVALID_CLIENT);
  });

  it('checks the key before the client', async () => {
    const reply = await call(server.url, 'GET', '/tools', { key: 'nope', clientId: 'cli_unknown' });
    expect(reply.body).toEqual(INVALID_API_KEY);
  });

  it('stores only the hash and never logs the key', async () => {
    const rows = await server.app.deps.db.prisma.apiKey.findMany();
    const dump = JSON.stringify(rows);
    for (const key of [agent.apiKey, other.apiKey]) {
      expect(dump).not.toContain(key);
      // The secret part (43 base64url characters, which may themselves contain `_`).
      const secret = key.slice('tg_key_'.length + 20 + 1);
      expect(secret).toHaveLength(43);
      expect(dump).not.toContain(secret);
    }
    expect(server.logs.join('')).not.toContain(agent.apiKey);
  });
});

describe.runIf(backends().some((b) => b.name === 'postgres'))(
  'revocation across servers on one PostgreSQL',
  () => {
    let first: TestServer;
    let second: TestServer;
    const clock = manualClock();
    beforeAll(async () => {
      first = await startServer('postgres');
      second = await startServer('postgres', { databaseUrl: first.databaseUrl, clock });
    });
    afterAll(async () => {
      await second?.close();
      await first?.close();
    });

    it('a key revoked on one server stops working on the other within the recheck time (< 5 s)', async () => {
      expect(LIMITS.apiKeyRecheckMs).toBeLessThan(5_000);
      const agent = await provisionAgent(first, ['tools:execute']);
      const before = await call(second.url, 'GET', '/tools', { key: agent.apiKey, clientId: agent.clientId });
      expect(before.status).toBe(200);
      const revoked = await call(first.url, 'DELETE', `/admin/api-keys/${agent.keyId}`, {
        key: first.adminKey,
      });
      expect(revoked.body).toEqual({ ok: true });
      clock.advance(LIMITS.apiKeyRecheckMs);
      const after = await call(second.url, 'GET', '/tools', { key: agent.apiKey, clientId: agent.clientId });
      expect(after.status).toBe(401);
      expect(after.body).toEqual(INVALID_API_KEY);
    });
  },
);
