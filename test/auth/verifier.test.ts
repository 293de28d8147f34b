// The API-key verifier's own rules (issue 29: each was a surviving mutant): the Bearer pattern is
// anchored and bounded, a just-refused key is answered without argon2 until the recheck time,
// failures are limited also for callers without a socket address, and concurrent checks of one
// key share one verification. The server's own verifier, on PGlite, with a manual clock.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiKeyVerifier } from '../../server/auth/authenticate.ts';
import { manualClock } from '../../server/clock.ts';
import { LIMITS } from '../../server/config.ts';
import { type Agent, provisionAgent } from '../support/agent.ts';
import { startServer, type TestServer } from '../support/server.ts';

describe('ApiKeyVerifier', () => {
  const clock = manualClock(Date.parse('2026-03-01T12:00:00Z'));
  let server: TestServer;
  let keys: ApiKeyVerifier;
  beforeAll(async () => {
    server = await startServer('pglite', { clock });
    keys = server.app.deps.keys;
  });
  afterAll(async () => {
    await server?.close();
  });

  const forged = (agent: Agent) => `tg_${agent.keyId}_${randomBytes(32).toString('base64url')}`;
  const bearer = (key: string) => `Bearer ${key}`;

  it('reads a key only from exactly "Bearer <1–512 visible characters>"', async () => {
    const agent = await provisionAgent(server, ['tools:execute']);
    expect((await keys.authenticate(bearer(agent.apiKey))).ok).toBe(true);
    const refused = [
      `x${bearer(agent.apiKey)}`,
      `${bearer(agent.apiKey)} trailing`,
      `${bearer(agent.apiKey)}\n`,
      bearer(`${agent.apiKey}${'a'.repeat(513 - agent.apiKey.length)}`),
      'Bearer ',
    ];
    const runs = keys.stats().argon2Runs;
    for (const authorization of refused) {
      expect(await keys.authenticate(authorization)).toEqual({ ok: false, error: 'invalid_api_key' });
    }
    // None of them cost a verification: the pattern refuses them before argon2. (The 512 bound is
    // a second fence: keyIdOf's exact key format already refuses a longer key before argon2.)
    expect(keys.stats().argon2Runs).toBe(runs);
  });

  it('refuses a Bearer token that is not an API key without argon2 and without counting a failure', async () => {
    const before = keys.stats();
    expect(await keys.authenticate(bearer('not-an-api-key'))).toEqual({
      ok: false,
      error: 'invalid_api_key',
    });
    expect(keys.stats()).toEqual(before);
  });

  it('answers invalid_api_key to a verified key found revoked at its recheck', async () => {
    const agent = await provisionAgent(server, ['tools:execute']);
    expect(await keys.authenticate(bearer(agent.apiKey))).toEqual({
      ok: true,
      value: { keyId: agent.keyId, clientId: agent.clientId, scopes: ['tools:execute'] },
    });
    await server.app.deps.db.prisma.apiKey.update({
      where: { id: agent.keyId },
      data: { revokedAt: new Date(clock.now()) },
    });
    clock.advance(LIMITS.apiKeyRecheckMs);
    expect(await keys.authenticate(bearer(agent.apiKey))).toEqual({ ok: false, error: 'invalid_api_key' });
  });

  it('answers a just-refused key without argon2 until the recheck time, then verifies it again', async () => {
    const agent = await provisionAgent(server, ['tools:execute']);
    const wrong = forged(agent);
    const before = keys.stats();
    const runs = before.argon2Runs;
    expect(await keys.authenticate(bearer(wrong))).toEqual({ ok: false, error: 'invalid_api_key' });
    expect(keys.stats().argon2Runs).toBe(runs + 1);

    clock.advance(LIMITS.apiKeyRecheckMs - 1);
    expect(await keys.authenticate(bearer(wrong))).toEqual({ ok: false, error: 'invalid_api_key' });
    expect(keys.stats()).toEqual({
      argon2Runs: runs + 1,
      refusedBeforeArgon2: keys.stats().refusedBeforeArgon2,
    });

    clock.advance(1);
    expect(await keys.authenticate(bearer(wrong))).toEqual({ ok: false, error: 'invalid_api_key' });
    expect(keys.stats().argon2Runs).toBe(runs + 2);
  });

  it('limits wrong secrets per key id for a caller without an address', async () => {
    const agent = await provisionAgent(server, ['tools:execute']);
    const before = keys.stats();
    for (let i = 0; i < LIMITS.apiKeyFailuresPerKeyId; i += 1) {
      expect((await keys.authenticate(bearer(forged(agent)))).ok).toBe(false);
    }
    expect(keys.stats()).toEqual({
      argon2Runs: before.argon2Runs + LIMITS.apiKeyFailuresPerKeyId,
      refusedBeforeArgon2: before.refusedBeforeArgon2,
    });
    expect(await keys.authenticate(bearer(forged(agent)))).toEqual({ ok: false, error: 'invalid_api_key' });
    expect(keys.stats()).toEqual({
      argon2Runs: before.argon2Runs + LIMITS.apiKeyFailuresPerKeyId,
      refusedBeforeArgon2: before.refusedBeforeArgon2 + 1,
    });
    clock.advance(LIMITS.apiKeyFailureWindowMs);
  });

  it('lets concurrent checks of one key share one verification, and counts them as one failure', async () => {
    const agent = await provisionAgent(server, ['tools:execute']);
    const runs = keys.stats().argon2Runs;
    const replies = await Promise.all(
      Array.from({ length: 5 }, () => keys.authenticate(bearer(agent.apiKey))),
    );
    expect(replies.every((reply) => reply.ok)).toBe(true);
    expect(keys.stats().argon2Runs).toBe(runs + 1);

    // 25 checks of one wrong key at once are one failure: 19 other wrong keys still get argon2.
    const before = keys.stats();
    const wrong = forged(agent);
    await Promise.all(
      Array.from({ length: 25 }, () => keys.authenticate(bearer(wrong), { address: '192.0.2.7' })),
    );
    for (let i = 0; i < LIMITS.apiKeyFailuresPerKeyId - 1; i += 1) {
      await keys.authenticate(bearer(forged(agent)), { address: '192.0.2.7' });
    }
    expect(keys.stats()).toEqual({
      argon2Runs: before.argon2Runs + LIMITS.apiKeyFailuresPerKeyId,
      refusedBeforeArgon2: before.refusedBeforeArgon2,
    });
    clock.advance(LIMITS.apiKeyFailureWindowMs);
  });
});
