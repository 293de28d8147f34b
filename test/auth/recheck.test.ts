// What the verified-key cache must still notice: a revocation or a scope change written by another
// server (straight into the database here, bypassing this server's own eviction) within
// LIMITS.apiKeyRecheckMs, and last_used_at written at most once a minute per key.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { manualClock } from '../../server/clock.ts';
import { LIMITS } from '../../server/config.ts';
import { provisionAgent } from '../support/agent.ts';
import { describeBackends } from '../support/db.ts';
import { call, startServer, type TestServer } from '../support/server.ts';

const INVALID_API_KEY = {
  ok: false,
  error: 'invalid_api_key',
  message: 'The API key is missing, malformed, unknown or revoked.',
};

describeBackends('verified-key cache', (backend) => {
  const clock = manualClock(Date.parse('2026-03-01T12:00:00Z'));
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer(backend.name, { clock });
  });
  afterAll(async () => {
    await server?.close();
  });

  const tools = (agent: { apiKey: string; clientId: string }) =>
    call(server.url, 'GET', '/tools', { key: agent.apiKey, clientId: agent.clientId });
  const row = (keyId: string) => server.app.deps.db.prisma.apiKey.findUniqueOrThrow({ where: { id: keyId } });

  it('notices a revocation made elsewhere within the recheck time, not before', async () => {
    const agent = await provisionAgent(server, ['tools:execute']);
    expect((await tools(agent)).status).toBe(200);
    // Another server revokes: only the database changes, this server's cache is not told.
    await server.app.deps.db.prisma.apiKey.update({
      where: { id: agent.keyId },
      data: { revokedAt: new Date(clock.now()) },
    });
    clock.advance(LIMITS.apiKeyRecheckMs - 1);
    expect((await tools(agent)).status).toBe(200);
    clock.advance(1);
    const after = await tools(agent);
    expect([after.status, after.body]).toEqual([401, INVALID_API_KEY]);
    clock.advance(LIMITS.apiKeyRecheckMs);
    expect((await tools(agent)).body).toEqual(INVALID_API_KEY);
  });

  it('picks up a scope change made elsewhere at the next recheck', async () => {
    const agent = await provisionAgent(server, ['tools:execute', 'connections:read']);
    const listed = () =>
      call(server.url, 'GET', '/connections', {
        key: agent.apiKey,
        clientId: agent.clientId,
        headers: { 'x-service-user-id': 'u1' },
      });
    expect((await listed()).status).toBe(200);
    await server.app.deps.db.prisma.apiKey.update({
      where: { id: agent.keyId },
      data: { scopes: ['tools:execute'] },
    });
    expect((await listed()).status).toBe(200);
    clock.advance(LIMITS.apiKeyRecheckMs);
    const denied = await listed();
    expect([denied.status, denied.body.error, denied.body.scope]).toEqual([
      403,
      'rbac_denied',
      'connections:read',
    ]);
  });

  it('writes last_used_at on first use, then at most once a minute', async () => {
    const agent = await provisionAgent(server, ['tools:execute']);
    expect((await row(agent.keyId)).lastUsedAt).toBeNull();
    const first = clock.now();
    expect((await tools(agent)).status).toBe(200);
    await expect.poll(async () => (await row(agent.keyId)).lastUsedAt?.getTime()).toBe(first);

    clock.advance(LIMITS.apiKeyLastUsedWriteMs - 1);
    expect((await tools(agent)).status).toBe(200);
    expect((await tools(agent)).status).toBe(200);
    expect((await row(agent.keyId)).lastUsedAt?.getTime()).toBe(first);
    clock.advance(1);
    const later = clock.now();
    expect((await tools(agent)).status).toBe(200);
    await expect.poll(async () => (await row(agent.keyId)).lastUsedAt?.getTime()).toBe(later);
  });
});
