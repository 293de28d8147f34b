import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../server/config.ts';
import { requestFingerprint } from '../../server/idempotency/fingerprint.ts';
import { backends } from '../support/db.ts';
import type { Reply } from '../support/server.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';
import { type Agent, hits, newAgent, proxy, REPLAYED_HEADER, registerApps } from './helpers.ts';

const onPostgres = backends().some((backend) => backend.name === 'postgres');

/** Exactly one fresh 200; every other answer a 409 or a replay of it. */
function expectOneRun(replies: Reply[]): Reply {
  const fresh = replies.filter((r) => r.status === 200 && r.headers.get(REPLAYED_HEADER) === null);
  expect(fresh).toHaveLength(1);
  const first = fresh[0] as Reply;
  for (const reply of replies) {
    if (reply === first) continue;
    if (reply.status === 409) expect(reply.body.error).toBe('idempotency_in_progress');
    else
      expect([reply.status, reply.headers.get(REPLAYED_HEADER), reply.text]).toEqual([
        200,
        'true',
        first.text,
      ]);
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
    agent = await newAgent(one);
  });
  afterAll(async () => {
    await two?.close();
    await one?.close();
    await upstream?.close();
  });

  it('runs one of 12 parallel requests split across both servers', async () => {
    const body = { toolId: 'demo:::slow', parameters: { ms: 800 } };
    const replies = await Promise.all(
      Array.from({ length: 12 }, (_, i) => proxy(i % 2 === 0 ? one : two, agent, 'both-1', body)),
    );
    expect(hits(upstream, '/slow', 'ms=800')).toBe(1);
    const first = expectOneRun(replies);
    expect(replies.filter((r) => r.status === 409).length).toBeGreaterThan(0);
    for (const server of [one, two]) {
      const again = await proxy(server, agent, 'both-1', body);
      expect([again.status, again.headers.get(REPLAYED_HEADER), again.text]).toEqual([
        200,
        'true',
        first.text,
      ]);
      const other = await proxy(server, agent, 'both-1', { toolId: 'demo:::slow', parameters: { ms: 801 } });
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
      Array.from({ length: 10 }, (_, i) => proxy(i % 2 === 0 ? one : two, agent, 'both-dead', body)),
    );
    expectOneRun(replies);
    expect(hits(upstream, '/items/both-dead')).toBe(1);
  });

  it('keeps a failed-before-upstream key free on every server', async () => {
    const body = { toolId: 'oauthy:::getMe', parameters: {} };
    const headers = { 'x-service-user-id': 'u-both' };
    const first = await proxy(one, agent, 'both-auth', body, headers);
    const second = await proxy(two, agent, 'both-auth', body, headers);
    expect([first.status, second.status]).toEqual([401, 401]);
    expect(second.headers.get(REPLAYED_HEADER)).toBeNull();
  });
});
