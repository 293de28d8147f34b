// The OAuth state repository on its own: create → find → claim, where claim is the one place the
// single-use rule lives. A claim made from a record read before another claim must still lose: the
// database's conditional UPDATE decides, not the record in hand.
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LIMITS } from '../../server/config.ts';
import { type Database, openDatabase } from '../../server/db/database.ts';
import { hashState } from '../../server/oauth/state.ts';
import { type NewState, OAuthStateRepository } from '../../server/oauth/state-repository.ts';
import { createTestDatabase, describeBackends, type TestDatabase } from '../support/db.ts';

describeBackends('OAuth state repository', (backend) => {
  let database: TestDatabase;
  let db: Database;
  let states: OAuthStateRepository;
  const now = Date.parse('2026-01-01T00:00:00Z');
  let counter = 0;

  beforeAll(async () => {
    database = await createTestDatabase(backend.name);
    db = await openDatabase(database.url);
    states = new OAuthStateRepository(db.prisma, pino({ level: 'silent' }));
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  async function fresh(expiresAt = new Date(now + LIMITS.oauthStateTtlMs)): Promise<string> {
    const state = `state-${++counter}-${Math.random()}`;
    const row: NewState = {
      stateHash: hashState(state),
      clientId: 'cli_a',
      userId: 'u1',
      appId: 'demo',
      redirectUri: 'https://agent.example/cb',
      verifier: new Uint8Array([1, 2, 3]),
      expiresAt,
    };
    await states.create(row, now);
    return state;
  }

  it('finds a state by its value, storing only its hash', async () => {
    const state = await fresh();
    const row = await states.find(state);
    expect(row).toMatchObject({
      stateHash: hashState(state),
      clientId: 'cli_a',
      userId: 'u1',
      appId: 'demo',
      redirectUri: 'https://agent.example/cb',
      usedAt: null,
    });
    expect(row?.id).toMatch(/^ost_[a-z0-9]{20}$/);
    const rows = await db.prisma.oAuthState.findMany();
    expect(
      JSON.stringify(rows, (_key, value) => (typeof value === 'bigint' ? String(value) : value)),
    ).not.toContain(state);
    expect(await states.find('not-ours')).toBeNull();
  });

  it('claims a state once; a second claim, even from the record read before, is "used"', async () => {
    const state = await fresh();
    const before = await states.find(state);
    if (!before) throw new Error('no row');
    expect(await states.claim(before, now)).toEqual({ ok: true });
    expect(await states.claim(before, now)).toEqual({ ok: false, error: 'used' });
    const after = await states.find(state);
    expect(after?.usedAt?.getTime()).toBe(now);
    if (!after) throw new Error('no row');
    expect(await states.claim(after, now)).toEqual({ ok: false, error: 'used' });
  });

  it('lets exactly one of 20 concurrent claims of one record win', async () => {
    const state = await fresh();
    const record = await states.find(state);
    if (!record) throw new Error('no row');
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => states.claim(record, now)));
    expect(outcomes.filter((outcome) => outcome.ok)).toHaveLength(1);
    expect(outcomes.filter((outcome) => !outcome.ok && outcome.error === 'used')).toHaveLength(19);
  });

  it('refuses an expired state, also when the record in hand looks fresh', async () => {
    const state = await fresh(new Date(now + 1_000));
    const record = await states.find(state);
    if (!record) throw new Error('no row');
    expect(await states.claim(record, now + 1_000)).toEqual({ ok: false, error: 'expired' });
    // The database's own check: a record whose expiry was moved back meanwhile.
    await db.prisma.oAuthState.update({ where: { id: record.id }, data: { expiresAt: new Date(now) } });
    expect(await states.claim(record, now + 1)).toEqual({ ok: false, error: 'used' });
    expect((await states.find(state))?.usedAt).toBeNull();
  });

  it('forgets states a day past their expiry when a new one is created, at most once a minute', async () => {
    const pruning = new OAuthStateRepository(db.prisma, pino({ level: 'silent' }));
    const old = await fresh(new Date(now - LIMITS.oauthStateRetentionMs - 1));
    const recent = await fresh(new Date(now - LIMITS.oauthStateRetentionMs + 60_000));
    const row = (state: string) =>
      db.prisma.oAuthState.findUnique({ where: { stateHash: hashState(state) } });
    await pruning.create(
      {
        stateHash: hashState(`prune-${Math.random()}`),
        clientId: 'cli_a',
        userId: 'u2',
        appId: 'demo',
        redirectUri: null,
        verifier: new Uint8Array([9]),
        expiresAt: new Date(now + 600_000),
      },
      now,
    );
    await expect.poll(() => row(old)).toBeNull();
    expect(await row(recent)).not.toBeNull();
  });
});
