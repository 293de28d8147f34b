import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../server/config.ts';
import { requestFingerprint } from '../../server/idempotency/fingerprint.ts';
import { HEADER } from '../../shared/headers.ts';
import { type Agent, provisionAgent, proxy } from '../support/agent.ts';
import { backends } from '../support/db.ts';
import type { Reply } from '../support/server.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { hits, startUpstream, type Upstream } from '../support/upstream.ts';
import { keyed, registerApps, replayed } from './helpers.ts';

const onPostgres = backends().some((backend) => backend.name === 'postgres');

/** Exactly one fresh 200; every other answer a 409 or a replay of it. */
function expectOneRun(replies: Reply[]): Reply {
  const fresh = replies.filter((r) => r.status === 200 && replayed(r) === null);
  expect(fresh).toHaveLength(1);
  const first = fresh[0] as Reply;
  for (const reply of replies) {
    if (reply === first) continue;
    if (reply.status === 409) expect(reply.body.error).toBe('idempotency_in_progress');
    else expect([reply.status, replayed(reply), reply.text]).toEqual([200, 'true', first.text]);
  }
  return first;
}

describe.skipIf(!onPostgres)('idempotency across two servers on one PostgreSQL', () => {
  let upstream: Upstream;
  let one: TestServer;
  let two: TestServer;
  let agent: Agent;

  beforeAll(async () => {
    upstream = await startUpstream();
    one = await startServer('postgres');
    two = await startServer('postgres', { databaseUrl: one.databaseUrl });
    await registerApps(one, upstream);
    agent = await provisionAgent(one, ['tools:execute']);
  });
  afterAll(async () => {
    await two?.close();
    await one?.close();
    await upstream?.close();
  });

  it('runs one of 12 parallel requests split across both servers', async () => {
    const body = { toolId: 'demo:::slow', parameters: { ms: 800 } };
    const replies = await Promise.all(
      Array.from({ length: 12 }, (_, i) => proxy(i % 2 === 0 ? one : two, agent, body, keyed('both-1'))),
    );
    expect(hits(upstream, '/slow', 'ms=800')).toBe(1);
    const first = expectOneRun(replies);
    expect(replies.filter((r) => r.status === 409).length).toBeGreaterThan(0);
    for (const server of [one, two]) {
      const again = await proxy(server, agent, body, keyed('both-1'));
      expect([again.status, replayed(again), again.text]).toEqual([200, 'true', first.text]);
      const other = await proxy(
        server,
        agent,
        { toolId: 'demo:::slow', parameters: { ms: 801 } },
        keyed('both-1'),
      );
      expect([other.status, other.body.error]).toEqual([422, 'idempotency_key_reused']);
    }
    expect(hits(upstream, '/slow', 'ms=800')).toBe(1);
  });

  it('lets exactly one server take over a dead record', async () => {
    const now = Date.now();
    await one.app.deps.db.prisma.idempotencyRecord.create({
      data: {
        apiKeyId: agent.keyId,
        key: 'both-dead',
        fingerprint: requestFingerprint({
          toolId: 'demo:::getItem',
          appId: 'demo',
          userId: undefined,
          parameters: { itemId: 'both-dead' },
        }),
        state: 'in_progress',
        owner: 'a-process-that-died',
        leaseUntil: new Date(now - 1),
        createdAt: new Date(now - 60_000),
        expiresAt: new Date(now - 60_000 + LIMITS.idempotencyTtlMs),
      },
    });
    const body = { toolId: 'demo:::getItem', parameters: { itemId: 'both-dead' } };
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) => proxy(i % 2 === 0 ? one : two, agent, body, keyed('both-dead'))),
    );
    expectOneRun(replies);
    expect(hits(upstream, '/items/both-dead')).toBe(1);
  });

  it('keeps a failed-before-upstream key free on every server', async () => {
    const body = { toolId: 'oauthy:::getMe', parameters: {} };
    const headers = { [HEADER.userId]: 'u-both' };
    const first = await proxy(one, agent, body, keyed('both-auth', headers));
    const second = await proxy(two, agent, body, keyed('both-auth', headers));
    expect([first.status, second.status]).toEqual([401, 401]);
    expect(replayed(second)).toBeNull();
  });
});
