import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { manualClock } from '../../server/clock.ts';
import { type Database, openDatabase } from '../../server/db/database.ts';
import type { Prisma } from '../../server/db/generated/client.ts';
import { purgeExpired, startPurger } from '../../server/idempotency/purge.ts';
import { ADMIN_SCOPE, IdempotencyService, scopeOf } from '../../server/idempotency/service.ts';
import { idempotencySettings } from '../../server/idempotency/settings.ts';
import { IdempotencyStore } from '../../server/idempotency/store.ts';
import { createLogger } from '../../server/logger.ts';
import { createTestDatabase, describeBackends, type TestDatabase } from '../support/db.ts';

const logger = createLogger(process.env.IDEM_LOG ? 'debug' : 'silent');
const ok = (body: unknown = { ok: true }) => ({ status: 200, body });

describe('scopeOf', () => {
  it('keeps the admin key in a namespace no API key id can have', () => {
    expect(scopeOf('key_abcdefghij0123456789')).toBe('key_abcdefghij0123456789');
    expect(scopeOf(null)).toBe(ADMIN_SCOPE);
    expect(ADMIN_SCOPE).not.toMatch(/^key_[a-z0-9]{20}$/);
  });
});

describe('idempotency settings', () => {
  it('leases for the upstream time-out plus a margin and renews well within it', () => {
    const settings = idempotencySettings({ upstreamTimeoutMs: 30_000 });
    expect(settings.leaseMs).toBeGreaterThan(30_000);
    expect(settings.renewEveryMs).toBeLessThan(settings.leaseMs / 2);
    expect(settings.ttlMs).toBe(24 * 60 * 60 * 1000);
  });
});

describe('startPurger', () => {
  it('runs passes one after another off a timer and stops, waiting for the pass in flight', async () => {
    let passes = 0;
    let inFlight = 0;
    let overlapped = false;
    const purger = startPurger(
      async () => {
        inFlight += 1;
        overlapped ||= inFlight > 1;
        await sleep(15);
        passes += 1;
        inFlight -= 1;
        return passes === 1 ? 3 : 0;
      },
      5,
      logger,
    );
    while (passes < 3) await sleep(5);
    await purger.stop();
    const stoppedAt = passes;
    expect(inFlight).toBe(0);
    await sleep(40);
    expect(passes).toBe(stoppedAt);
    expect(overlapped).toBe(false);
  });

  it('survives a failing pass: says so in one warning and runs the next pass', async () => {
    const lines: Array<{ level: number; msg: string; err?: { message: string } }> = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    let calls = 0;
    let secondPass: () => void = () => {};
    const ranAgain = new Promise<void>((resolve) => {
      secondPass = resolve;
    });
    const purger = startPurger(
      async () => {
        calls += 1;
        if (calls === 1) throw new Error('database away');
        if (calls === 2) secondPass();
        return 0;
      },
      5,
      createLogger('info', sink),
    );
    await ranAgain;
    await purger.stop();
    expect(calls).toBeGreaterThanOrEqual(2);
    expect(lines.map(({ level, msg, err }) => ({ level, msg, err: err?.message }))).toEqual([
      { level: 40, msg: 'purging expired idempotency records failed; retrying later', err: 'database away' },
    ]);
  });
});

describeBackends('idempotency service and store', (backend) => {
  let tdb: TestDatabase;
  let db: Database;
  const clock = manualClock(Date.UTC(2026, 0, 1));
  const settings = { ...idempotencySettings({ upstreamTimeoutMs: 1_000 }), leaseMs: 2_000, renewEveryMs: 20 };
  let service: IdempotencyService;
  /** Another server on the same database: its own cache, the same rows. */
  let peer: IdempotencyService;

  beforeAll(async () => {
    tdb = await createTestDatabase(backend.name);
    db = await openDatabase(tdb.url);
    service = new IdempotencyService(db.prisma, clock, logger, settings);
    peer = new IdempotencyService(db.prisma, clock, logger, settings);
  });
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });

  const row = (key: string) =>
    db.prisma.idempotencyRecord.findUnique({ where: { apiKeyId_key: { apiKeyId: 'key_s', key } } });
  const slot = (key: string) => ({ scope: 'key_s', key });

  it('a live run renews its lease, so a peer never takes over a slow call', async () => {
    let release = () => {};
    const running = service.run(slot('slow'), 'fp', async () => {
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      return ok();
    });
    try {
      await vi.waitFor(async () => expect(await row('slow')).not.toBeNull());
      clock.advance(settings.leaseMs * 5); // far past the first lease
      await vi.waitFor(async () =>
        expect((await row('slow'))?.leaseUntil.getTime()).toBe(clock.now() + settings.leaseMs),
      );
      expect(await peer.run(slot('slow'), 'fp', async () => ok({ twice: true }))).toEqual({
        ok: false,
        error: 'in_progress',
      });
    } finally {
      release();
    }
    expect(await running).toEqual({ ok: true, value: { replayed: false, answer: ok() } });
    expect(await peer.run(slot('slow'), 'fp', async () => ok({ twice: true }))).toEqual({
      ok: true,
      value: { replayed: true, answer: ok() },
    });
  });

  it('a run that lost its record to a takeover does not overwrite it', async () => {
    const outcome = await service.run(slot('fenced'), 'fp', async () => {
      await db.prisma.idempotencyRecord.update({
        where: { apiKeyId_key: { apiKeyId: 'key_s', key: 'fenced' } },
        data: { owner: 'the-taker' },
      });
      return ok({ mine: true });
    });
    expect(outcome).toEqual({ ok: true, value: { replayed: false, answer: ok({ mine: true }) } });
    expect(await row('fenced')).toMatchObject({
      state: 'in_progress',
      owner: 'the-taker',
      responseBody: null,
    });
  });

  it('forgets the record when the run throws or answers what is not stored', async () => {
    await expect(
      service.run(slot('throws'), 'fp', async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await row('throws')).toBeNull();
    for (const status of [400, 401, 403, 404, 500]) {
      const outcome = await service.run(slot(`status-${status}`), 'fp', async () => ({
        status,
        body: { status },
      }));
      expect(outcome).toMatchObject({ ok: true, value: { replayed: false } });
      expect(await row(`status-${status}`)).toBeNull();
    }
    for (const status of [200, 502, 504]) {
      await service.run(slot(`status-${status}`), 'fp', async () => ({ status, body: { status } }));
      expect(await row(`status-${status}`)).toMatchObject({ state: 'done', responseStatus: status });
      expect(await peer.run(slot(`status-${status}`), 'fp', async () => ok())).toEqual({
        ok: true,
        value: { replayed: true, answer: { status, body: { status } } },
      });
    }
  });

  it('the cache never answers what the database would not', async () => {
    await service.run(slot('cached'), 'fp-a', async () => ok({ n: 1 }));
    // Same key, other request: the database decides (422), not the cached record of fp-a.
    expect(await service.run(slot('cached'), 'fp-b', async () => ok())).toEqual({
      ok: false,
      error: 'conflict',
    });
    expect(await service.run(slot('cached'), 'fp-a', async () => ok())).toEqual({
      ok: true,
      value: { replayed: true, answer: ok({ n: 1 }) },
    });
    // Past its 24 hours the cached record is ignored and the key is as new.
    clock.advance(settings.ttlMs);
    expect(await service.run(slot('cached'), 'fp-b', async () => ok({ n: 2 }))).toEqual({
      ok: true,
      value: { replayed: false, answer: ok({ n: 2 }) },
    });
    expect(await peer.run(slot('cached'), 'fp-b', async () => ok())).toEqual({
      ok: true,
      value: { replayed: true, answer: ok({ n: 2 }) },
    });
  });

  it('purges expired records in bounded batches and keeps live ones', async () => {
    await service.purge(); // what the tests above left expired
    const now = clock.now();
    const at = (ms: number) => new Date(now + ms);
    const record = (key: string, expiresIn: number) => ({
      apiKeyId: 'key_p',
      key,
      fingerprint: 'fp',
      state: 'done',
      leaseUntil: at(-1),
      responseStatus: 200,
      responseBody: '{}',
      createdAt: at(expiresIn - settings.ttlMs),
      expiresAt: at(expiresIn),
    });
    await db.prisma.idempotencyRecord.createMany({
      data: [
        ...Array.from({ length: 1_234 }, (_, i) => record(`old-${i}`, -1 - i)),
        record('edge', 0),
        ...Array.from({ length: 5 }, (_, i) => record(`live-${i}`, 1 + i)),
      ],
    });
    const count = () => db.prisma.idempotencyRecord.count({ where: { apiKeyId: 'key_p' } });
    expect(await purgeExpired(db.prisma, now, { batchSize: 500, maxBatches: 2 })).toBe(1_000);
    expect(await count()).toBe(240);
    expect(await service.purge()).toBe(235);
    expect(
      (await db.prisma.idempotencyRecord.findMany({ where: { apiKeyId: 'key_p' } })).map((r) => r.key).sort(),
    ).toEqual(['live-0', 'live-1', 'live-2', 'live-3', 'live-4']);
    expect(await service.purge()).toBe(0);
  });

  // Issue 29: the claim loop's rare turns and the purge timer, each a surviving mutant before.

  /** A record as another run left it: by default done, its 24 hours just over. */
  const insertRecord = (
    apiKeyId: string,
    key: string,
    fields: Partial<Prisma.IdempotencyRecordCreateInput>,
  ) =>
    db.prisma.idempotencyRecord.create({
      data: {
        apiKeyId,
        key,
        fingerprint: 'fp',
        state: 'done',
        leaseUntil: new Date(clock.now() - 1),
        responseStatus: 200,
        responseBody: '{}',
        createdAt: new Date(clock.now() - settings.ttlMs - 1),
        expiresAt: new Date(clock.now() - 1),
        ...fields,
      },
    });
  it('claims a record that was released between its failed insert and its read', async () => {
    await insertRecord('key_s', 'vanish', {
      state: 'in_progress',
      owner: 'another-run',
      leaseUntil: new Date(clock.now() + settings.leaseMs),
      responseStatus: null,
      responseBody: null,
      expiresAt: new Date(clock.now() + settings.ttlMs),
    });
    const insert = IdempotencyStore.prototype.insert;
    // The other run releases its record right after our insert lost to it.
    const spy = vi.spyOn(IdempotencyStore.prototype, 'insert').mockImplementationOnce(async function (
      this: IdempotencyStore,
      ...args
    ) {
      const inserted = await insert.apply(this, args);
      await db.prisma.idempotencyRecord.delete({
        where: { apiKeyId_key: { apiKeyId: 'key_s', key: 'vanish' } },
      });
      return inserted;
    });
    try {
      let runs = 0;
      const outcome = await service.run(slot('vanish'), 'fp', async () => {
        runs += 1;
        return ok({ ran: true });
      });
      expect(outcome).toEqual({ ok: true, value: { replayed: false, answer: ok({ ran: true }) } });
      expect(runs).toBe(1);
      expect(spy).toHaveBeenCalledTimes(2);
    } finally {
      spy.mockRestore();
    }
  });

  it('takes over a record whose run stopped renewing its lease, keeping its expiry, and stores its own answer', async () => {
    const expiresAt = new Date(clock.now() + settings.ttlMs / 2);
    await insertRecord('key_s', 'abandoned', {
      state: 'in_progress',
      owner: 'a-dead-run',
      leaseUntil: new Date(clock.now() - 1),
      responseStatus: null,
      responseBody: null,
      expiresAt,
    });
    let runs = 0;
    const outcome = await service.run(slot('abandoned'), 'fp', async () => {
      runs += 1;
      return { status: 200, body: { took: 'over' } };
    });
    expect(outcome).toEqual({
      ok: true,
      value: { replayed: false, answer: { status: 200, body: { took: 'over' } } },
    });
    expect(runs).toBe(1);
    expect(await row('abandoned')).toMatchObject({
      state: 'done',
      responseStatus: 200,
      responseBody: '{"took":"over"}',
      expiresAt,
    });
  });

  it('answers in_progress without running when every claim round is lost to another run', async () => {
    await insertRecord('key_s', 'contested', { expiresAt: new Date(clock.now()) }); // over: claimable
    // Each replacement of the expired record is won by another run first.
    const replace = vi.spyOn(IdempotencyStore.prototype, 'replaceExpired').mockResolvedValue(false);
    const insert = vi.spyOn(IdempotencyStore.prototype, 'insert');
    try {
      let runs = 0;
      const outcome = await service.run(slot('contested'), 'fp', async () => {
        runs += 1;
        return ok();
      });
      expect(outcome).toEqual({ ok: false, error: 'in_progress' });
      expect(runs).toBe(0);
      expect(insert).toHaveBeenCalledTimes(4);
      expect(replace).toHaveBeenCalledTimes(4);
    } finally {
      replace.mockRestore();
      insert.mockRestore();
    }
  });

  it('closes without error when its purge timer was never started', async () => {
    await expect(new IdempotencyService(db.prisma, clock, logger, settings).close()).resolves.toBeUndefined();
  });

  it('purges off a timer started once, and stops purging on close', async () => {
    const purging = new IdempotencyService(db.prisma, clock, logger, { ...settings, purgeIntervalMs: 5 });
    const passes = vi.spyOn(purging, 'purge');
    await insertRecord('key_t', 'old', {});
    purging.startPurging();
    purging.startPurging(); // a second start keeps the one timer
    await vi.waitFor(async () =>
      expect(await db.prisma.idempotencyRecord.count({ where: { apiKeyId: 'key_t' } })).toBe(0),
    );
    await purging.close();
    const stoppedAt = passes.mock.calls.length;
    await sleep(50); // ten intervals: a timer left running would have purged again
    expect(passes.mock.calls.length).toBe(stoppedAt);
  });
});
