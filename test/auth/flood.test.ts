// Issue 11 §3: a flood of `Bearer tg_<real key id>_<random>` must not buy argon2 time. Failed
// verifications are limited per key id and per client address before argon2 runs; the flood is
// answered 401 as any wrong key, and the key's owner keeps working.
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../server/clock.ts';
import { LIMITS } from '../../server/config.ts';
import { type Agent, provisionAgent } from '../support/agent.ts';
import { startServer, type TestServer } from '../support/server.ts';

const INVALID_API_KEY = {
  ok: false,
  error: 'invalid_api_key',
  message: 'The API key is missing, malformed, unknown or revoked.',
};

/** GET /tools from a given loopback address (the whole of 127/8 is this machine). */
function getTools(
  server: TestServer,
  key: string,
  clientId: string,
  localAddress: string,
): Promise<{ status: number; body: unknown }> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/tools',
        localAddress,
        agent: false,
        headers: { authorization: `Bearer ${key}`, 'x-service-client-id': clientId },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('a wrong-secret flood against a real key id', () => {
  const clock = manualClock(Date.now());
  let server: TestServer;
  let agent: Agent;
  const forged = () => `tg_${agent.keyId}_${randomBytes(32).toString('base64url')}`;
  const stats = () => server.app.deps.keys.stats();

  beforeAll(async () => {
    server = await startServer('pglite', { clock });
    agent = await provisionAgent(server, ['tools:execute']);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers 401 to every forged key, runs argon2 at most the limit, and the owner keeps working', async () => {
    const owner = await getTools(server, agent.apiKey, agent.clientId, '127.0.0.2');
    expect(owner).toEqual({ status: 200, body: { tools: [] } });
    const before = stats();

    // 500 forged keys, 50 at a time, from the attacker's address, with the owner calling meanwhile.
    const ownerReplies: Array<Promise<{ status: number; body: unknown }>> = [];
    for (let batch = 0; batch < 10; batch += 1) {
      ownerReplies.push(getTools(server, agent.apiKey, agent.clientId, '127.0.0.2'));
      const replies = await Promise.all(
        Array.from({ length: 50 }, () => getTools(server, forged(), agent.clientId, '127.0.0.1')),
      );
      for (const reply of replies) expect(reply).toEqual({ status: 401, body: INVALID_API_KEY });
    }
    for (const reply of await Promise.all(ownerReplies))
      expect(reply).toEqual({ status: 200, body: { tools: [] } });

    const after = stats();
    expect(after.argon2Runs - before.argon2Runs).toBeLessThanOrEqual(LIMITS.apiKeyFailuresPerKeyId);
    expect(after.refusedBeforeArgon2 - before.refusedBeforeArgon2).toBeGreaterThanOrEqual(
      500 - LIMITS.apiKeyFailuresPerKeyId,
    );
  });

  it('does not lock the owner out: from an address that never failed, the key is verified afresh', async () => {
    server.app.deps.keys.evictKey(agent.keyId); // as after a restart: not verified in this process
    const before = stats();
    const owner = await getTools(server, agent.apiKey, agent.clientId, '127.0.0.3');
    expect(owner).toEqual({ status: 200, body: { tools: [] } });
    expect(stats().argon2Runs - before.argon2Runs).toBe(1);
  });

  it('refuses the flooding address before argon2 until the window ends, then verifies again', async () => {
    server.app.deps.keys.evictKey(agent.keyId);
    const before = stats();
    const blocked = await getTools(server, agent.apiKey, agent.clientId, '127.0.0.1');
    expect(blocked).toEqual({ status: 401, body: INVALID_API_KEY });
    expect(stats().argon2Runs).toBe(before.argon2Runs);

    clock.advance(LIMITS.apiKeyFailureWindowMs);
    const later = await getTools(server, agent.apiKey, agent.clientId, '127.0.0.1');
    expect(later).toEqual({ status: 200, body: { tools: [] } });
    expect(stats().argon2Runs).toBe(before.argon2Runs + 1);
  });

  it('limits one address across key ids too', async () => {
    clock.advance(LIMITS.apiKeyFailureWindowMs);
    const others = await Promise.all(
      Array.from({ length: 3 }, (_, i) => provisionAgent(server, ['tools:execute'], { name: `other-${i}` })),
    );
    const before = stats();
    for (let i = 0; i < LIMITS.apiKeyFailuresPerAddress + 10; i += 1) {
      const other = others[i % others.length] as (typeof others)[number];
      const key = `tg_${other.keyId}_${randomBytes(32).toString('base64url')}`;
      expect(await getTools(server, key, other.clientId, '127.0.0.4')).toEqual({
        status: 401,
        body: INVALID_API_KEY,
      });
    }
    // Each key id alone stays under its own limit; the address's limit is what stops the argon2 runs.
    expect(stats().argon2Runs - before.argon2Runs).toBe(LIMITS.apiKeyFailuresPerAddress);
  });
});
