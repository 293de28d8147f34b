import { afterAll, beforeAll, expect, it } from 'vitest';
import { manualClock } from '../../server/clock.ts';
import { LIMITS } from '../../server/config.ts';
import { requestFingerprint } from '../../server/idempotency/fingerprint.ts';
import { HEADER } from '../../shared/headers.ts';
import type { Agent } from '../support/agent.ts';
import { describeBackends } from '../support/db.ts';
import type { TestServer } from '../support/server.ts';
import { hits, type Upstream } from '../support/upstream.ts';
import { startWorld, type World } from '../support/world.ts';
import { keyed, registerApps, replayed } from './helpers.ts';

const getItem = (itemId: string, extra: Record<string, unknown> = {}) => ({
  toolId: 'demo:::getItem',
  parameters: { itemId, ...extra },
});

describeBackends('idempotency of /proxyV2', (backend) => {
  const clock = manualClock(Date.UTC(2026, 10, 21, 12, 0, 0));
  let world: World<'agent' | 'other'>;
  let upstream: Upstream;
  let server: TestServer;
  let agent: Agent;
  let other: Agent;

  beforeAll(async () => {
    world = await startWorld(backend.name, {
      server: { clock },
      agents: { agent: ['tools:execute'], other: ['tools:execute'] },
    });
    ({ server, upstream } = world);
    ({ agent, other } = world.agents);
    await registerApps(server, upstream);
  });
  afterAll(async () => {
    await world?.close();
  });

  const records = (key: string) => server.app.deps.db.prisma.idempotencyRecord.findMany({ where: { key } });

  it('replays a repeat with the stored status and body, without calling the upstream again', async () => {
    const first = await world.proxy(agent, getItem('seq-1'), keyed('seq-1'));
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      ok: true,
      data: { id: 'seq-1' },
      meta: { tool_id: 'demo:::getItem' },
    });
    expect(replayed(first)).toBeNull();

    for (let i = 0; i < 3; i += 1) {
      const again = await world.proxy(agent, getItem('seq-1'), keyed('seq-1'));
      expect(again.status).toBe(200);
      expect(replayed(again)).toBe('true');
      expect(again.text).toBe(first.text);
    }
    expect(hits(upstream, '/items/seq-1')).toBe(1);
    const [record] = await records('seq-1');
    expect(record).toMatchObject({ apiKeyId: agent.keyId, state: 'done', responseStatus: 200 });
    expect(record?.expiresAt.getTime()).toBe(clock.now() + LIMITS.idempotencyTtlMs);
  });

  it('treats deep-equal parameters as the same request, whatever their key order', async () => {
    const first = await world.proxy(
      agent,
      { toolId: 'demo:::listItems', parameters: { limit: 5, point: { x: 1, y: 2 }, tags: ['a', 'b'] } },
      keyed('order-1'),
    );
    expect(first.status).toBe(200);
    const again = await world.proxy(
      agent,
      { parameters: { tags: ['a', 'b'], point: { y: 2, x: 1 }, limit: 5 }, toolId: 'demo:::listItems' },
      keyed('order-1'),
    );
    expect([again.status, replayed(again)]).toEqual([200, 'true']);
    expect(again.text).toBe(first.text);
    // The bare tool name with X-Service-App-Id is the same composite tool.
    const bare = await world.proxy(
      agent,
      { toolId: 'listItems', parameters: { limit: 5, tags: ['a', 'b'], point: { x: 1, y: 2 } } },
      keyed('order-1', { [HEADER.appId]: 'demo' }),
    );
    expect([bare.status, replayed(bare)]).toEqual([200, 'true']);
    expect(hits(upstream, '/items')).toBe(1);
  });

  it('answers 422 idempotency_key_reused for a different request under a used key', async () => {
    const first = await world.proxy(agent, getItem('reuse-1'), keyed('reuse-1'));
    expect(first.status).toBe(200);
    const variants = [
      world.proxy(agent, getItem('reuse-2'), keyed('reuse-1')),
      world.proxy(agent, getItem('reuse-1', { fields: ['id'] }), keyed('reuse-1')),
      world.proxy(agent, getItem('reuse-1'), keyed('reuse-1', { [HEADER.userId]: 'u1' })),
      world.proxy(agent, { toolId: 'demo:::getText', parameters: {} }, keyed('reuse-1')),
    ];
    for (const reply of await Promise.all(variants)) {
      expect(reply.status).toBe(422);
      expect(reply.body).toEqual({
        ok: false,
        error: 'idempotency_key_reused',
        message: 'This idempotency key was already used with a different request.',
      });
      expect(replayed(reply)).toBeNull();
    }
    expect(hits(upstream, '/items/reuse-1')).toBe(1);
    expect(hits(upstream, '/items/reuse-2')).toBe(0);
    expect(hits(upstream, '/text')).toBe(0);
  });

  it('runs one of 10 parallel requests with one key; the others get 409 or the replay', async () => {
    const body = { toolId: 'demo:::slow', parameters: { ms: 700 } };
    const replies = await Promise.all(
      Array.from({ length: 10 }, () => world.proxy(agent, body, keyed('par-1'))),
    );
    expect(hits(upstream, '/slow', 'ms=700')).toBe(1);
    const fresh = replies.filter((r) => r.status === 200 && replayed(r) === null);
    expect(fresh).toHaveLength(1);
    expect(fresh[0]?.body.data).toEqual({ sleptMs: 700 });
    for (const reply of replies) {
      if (reply === fresh[0]) continue;
      if (reply.status === 409) {
        expect(reply.body).toEqual({
          ok: false,
          error: 'idempotency_in_progress',
          message: 'A request with this idempotency key is still running; retry later.',
        });
      } else {
        expect([reply.status, replayed(reply), reply.text]).toEqual([200, 'true', fresh[0]?.text]);
      }
    }
    expect(replies.filter((r) => r.status === 409).length).toBeGreaterThan(0);
    const after = await world.proxy(agent, body, keyed('par-1'));
    expect([after.status, replayed(after), after.text]).toEqual([200, 'true', fresh[0]?.text]);
    expect(hits(upstream, '/slow', 'ms=700')).toBe(1);
  });

  it('keeps the keys of different API keys apart', async () => {
    const mine = await world.proxy(agent, getItem('shared-1'), keyed('shared-1'));
    const theirs = await world.proxy(other, getItem('shared-1'), keyed('shared-1'));
    expect([mine.status, theirs.status]).toEqual([200, 200]);
    expect(replayed(mine)).toBeNull();
    expect(replayed(theirs)).toBeNull();
    // Neither sees a conflict with the other's use of the key.
    const theirsDifferent = await world.proxy(other, getItem('shared-2a'), keyed('shared-2'));
    const mineDifferent = await world.proxy(agent, getItem('shared-2b'), keyed('shared-2'));
    expect([theirsDifferent.status, mineDifferent.status]).toEqual([200, 200]);
    expect(hits(upstream, '/items/shared-1')).toBe(2);
    expect((await records('shared-1')).map((r) => r.apiKeyId).sort()).toEqual(
      [agent.keyId, other.keyId].sort(),
    );
  });

  it('does not store a 4xx of the run step: a retry after auth_required runs for real', async () => {
    const call = () =>
      world.proxy(
        agent,
        { toolId: 'oauthy:::getMe', parameters: {} },
        keyed('auth-1', { [HEADER.userId]: 'u-1' }),
      );
    for (let i = 0; i < 3; i += 1) {
      const reply = await call();
      expect(reply.status).toBe(401);
      expect(reply.body).toMatchObject({
        error: 'auth_required',
        app_id: 'oauthy',
        auth_endpoint: '/initiateOAuth',
      });
      expect(replayed(reply)).toBeNull();
      expect(await records('auth-1')).toEqual([]);
    }
    // The key is free again: another request may take it.
    const next = await world.proxy(agent, getItem('auth-1'), keyed('auth-1'));
    expect([next.status, replayed(next)]).toEqual([200, null]);
  });

  it('checks parameters before idempotency: an invalid call leaves no record', async () => {
    const bad = await world.proxy(
      agent,
      { toolId: 'demo:::slow', parameters: { ms: '5' } },
      keyed('params-1'),
    );
    expect([bad.status, bad.body.error]).toEqual([400, 'invalid_parameters']);
    expect(await records('params-1')).toEqual([]);
    const good = await world.proxy(
      agent,
      { toolId: 'demo:::slow', parameters: { ms: 5 } },
      keyed('params-1'),
    );
    expect([good.status, replayed(good)]).toEqual([200, null]);
  });

  it('stores a 502 upstream_error and replays it with its status and body', async () => {
    const first = await world.proxy(
      agent,
      { toolId: 'demo:::getStatus', parameters: { code: 500 } },
      keyed('bad-1'),
    );
    expect(first.status).toBe(502);
    expect(first.body).toMatchObject({ ok: false, error: 'upstream_error', upstream_status: 500 });
    expect(replayed(first)).toBeNull();
    const again = await world.proxy(
      agent,
      { toolId: 'demo:::getStatus', parameters: { code: 500 } },
      keyed('bad-1'),
    );
    expect([again.status, replayed(again), again.text]).toEqual([502, 'true', first.text]);
    expect(again.headers.get('content-type')).toMatch(/^application\/json/);
    expect(hits(upstream, '/status/500')).toBe(1);
  });

  it('keeps the exact text of a stored body, NUL characters and key order included', async () => {
    // JSONB would refuse \u0000 and reorder the echoed headers' keys; the stored text keeps both.
    const create = {
      toolId: 'demo:::createItem',
      parameters: { body: { title: 'nul\u0000here', labels: ['b', 'a'] } },
    };
    const first = await world.proxy(agent, create, keyed('exact-1'));
    expect(first.status).toBe(200);
    expect(first.body.data).toEqual({ id: 'item-1', title: 'nul\u0000here', labels: ['b', 'a'] });
    const again = await world.proxy(agent, create, keyed('exact-1'));
    expect([again.status, replayed(again), again.text]).toEqual([200, 'true', first.text]);
    const echo = await world.proxy(agent, { toolId: 'demo:::echo', parameters: {} }, keyed('exact-2'));
    const echoAgain = await world.proxy(agent, { toolId: 'demo:::echo', parameters: {} }, keyed('exact-2'));
    expect(echoAgain.text).toBe(echo.text);
    // A text/plain upstream error body, too.
    const text = { toolId: 'demo:::getStatus', parameters: { code: 503, size: 3 } };
    const error = await world.proxy(agent, text, keyed('exact-3'));
    expect([error.status, error.body.upstream_body]).toEqual([502, 'xxx']);
    const errorAgain = await world.proxy(agent, text, keyed('exact-3'));
    expect([errorAgain.status, errorAgain.text]).toEqual([502, error.text]);
  });

  it('rejects a malformed key with 400 invalid_request and accepts any 1–255 printable ASCII', async () => {
    const message = 'X-Service-Idempotency-Key must be 1 to 255 printable ASCII characters.';
    for (const key of ['', 'k'.repeat(256), 'tab\there', 'caf\u00e9']) {
      const reply = await world.proxy(agent, getItem('malformed'), keyed(key));
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual({
        ok: false,
        error: 'invalid_request',
        message,
        issues: [{ path: '', message }],
      });
    }
    expect(hits(upstream, '/items/malformed')).toBe(0);
    for (const key of ['k'.repeat(255), 'a b ~!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}', 'x']) {
      const reply = await world.proxy(agent, getItem(`ok-${key.length}`), keyed(key));
      expect([reply.status, replayed(reply)]).toEqual([200, null]);
    }
  });

  it('answers 409 while a record from another run holds a live lease, and takes over a dead one', async () => {
    const prisma = server.app.deps.db.prisma;
    const fingerprint = requestFingerprint({
      toolId: 'demo:::getItem',
      appId: 'demo',
      userId: undefined,
      parameters: { itemId: 'dead-1' },
    });
    const now = clock.now();
    const createdAt = new Date(now - 60_000);
    await prisma.idempotencyRecord.create({
      data: {
        apiKeyId: agent.keyId,
        key: 'dead-1',
        fingerprint,
        state: 'in_progress',
        owner: 'a-process-that-died',
        leaseUntil: new Date(now + 5_000),
        createdAt,
        expiresAt: new Date(createdAt.getTime() + LIMITS.idempotencyTtlMs),
      },
    });
    const held = await world.proxy(agent, getItem('dead-1'), keyed('dead-1'));
    expect([held.status, held.body.error]).toEqual([409, 'idempotency_in_progress']);
    // A different request under the key is still a reuse.
    expect((await world.proxy(agent, getItem('dead-2'), keyed('dead-1'))).status).toBe(422);
    expect(hits(upstream, '/items/dead-1')).toBe(0);

    clock.advance(5_001);
    const taken = await world.proxy(agent, getItem('dead-1'), keyed('dead-1'));
    expect([taken.status, replayed(taken)]).toEqual([200, null]);
    expect(hits(upstream, '/items/dead-1')).toBe(1);
    const [record] = await records('dead-1');
    expect(record).toMatchObject({ state: 'done', responseStatus: 200 });
    expect(record?.owner).not.toBe('a-process-that-died');
    // The 24 hours still count from the first request.
    expect(record?.expiresAt.getTime()).toBe(createdAt.getTime() + LIMITS.idempotencyTtlMs);
    const replay = await world.proxy(agent, getItem('dead-1'), keyed('dead-1'));
    expect([replay.status, replayed(replay), replay.text]).toEqual([200, 'true', taken.text]);
  });

  it('forgets a key 24 hours after its first request', async () => {
    const first = await world.proxy(agent, getItem('day-1'), keyed('day-1'));
    expect(first.status).toBe(200);
    clock.advance(LIMITS.idempotencyTtlMs - 1);
    const late = await world.proxy(agent, getItem('day-1'), keyed('day-1'));
    expect([late.status, replayed(late)]).toEqual([200, 'true']);
    expect(hits(upstream, '/items/day-1')).toBe(1);

    clock.advance(1);
    const fresh = await world.proxy(agent, getItem('day-1'), keyed('day-1'));
    expect([fresh.status, replayed(fresh)]).toEqual([200, null]);
    expect(hits(upstream, '/items/day-1')).toBe(2);
    const [record] = await records('day-1');
    expect(record?.createdAt.getTime()).toBe(clock.now());
    const replay = await world.proxy(agent, getItem('day-1'), keyed('day-1'));
    expect([replay.status, replayed(replay)]).toEqual([200, 'true']);

    // An expired key is as new: even a different request may take it.
    clock.advance(LIMITS.idempotencyTtlMs);
    const other = await world.proxy(agent, getItem('day-1-other'), keyed('day-1'));
    expect([other.status, replayed(other)]).toEqual([200, null]);
    expect(hits(upstream, '/items/day-1')).toBe(2);
  });

  it('runs every request without a key', async () => {
    for (let i = 0; i < 2; i += 1) {
      const reply = await world.proxy(agent, getItem('nokey-1'));
      expect([reply.status, replayed(reply)]).toEqual([200, null]);
    }
    expect(hits(upstream, '/items/nokey-1')).toBe(2);
  });
});
