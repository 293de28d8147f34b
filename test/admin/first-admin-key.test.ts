/**
 * The first admin key (docs/reference.md "Configuration"): made when no unrevoked key with scope
 * `admin` exists, and on every later start found with one read on the driver, not through Prisma,
 * so that no start waits for Prisma's query compiler to load (issue 23, item 13).
 */
import { afterEach, expect, it } from 'vitest';
import { ensureAdminKey } from '../../server/admin/api-keys.ts';
import { SCOPE } from '../../server/auth/scopes.ts';
import { dbQueryCount } from '../../server/db/count-queries.ts';
import { type Database, openDatabase } from '../../server/db/database.ts';
import { createTestDatabase, describeBackends, type TestDatabase } from '../support/db.ts';

const NOW = new Date('2026-11-28T00:00:00Z');

describeBackends('ensureAdminKey', (backend) => {
  let tdb: TestDatabase | undefined;
  let db: Database | undefined;
  afterEach(async () => {
    await db?.close();
    await tdb?.drop();
    db = undefined;
    tdb = undefined;
  });

  const open = async () => {
    tdb = await createTestDatabase(backend.name);
    db = await openDatabase(tdb.url);
    return db;
  };

  it('makes one key on an empty database, then finds it with no Prisma query', async () => {
    const opened = await open();
    const first = await ensureAdminKey(opened, NOW);
    expect(first).toEqual({
      keyId: expect.stringMatching(/^key_/),
      apiKey: expect.stringMatching(/^tg_key_/),
    });
    const stored = await opened.prisma.apiKey.findMany({
      select: { id: true, scopes: true, revokedAt: true },
    });
    expect(stored).toEqual([{ id: first?.keyId, scopes: [SCOPE.admin], revokedAt: null }]);

    const queriesBefore = dbQueryCount();
    expect(await ensureAdminKey(opened, NOW)).toBeNull();
    expect(dbQueryCount() - queriesBefore).toBe(0);
  });

  it('makes a new key when the admin keys there are revoked, and ignores keys without scope admin', async () => {
    const opened = await open();
    await opened.prisma.apiKey.createMany({
      data: [
        { id: 'key_revokedadmin', hash: 'h', start: 's', scopes: [SCOPE.admin], revokedAt: NOW },
        { id: 'key_notadmin', hash: 'h', start: 's', scopes: ['tools:execute'] },
      ],
    });
    const made = await ensureAdminKey(opened, NOW);
    expect(made?.keyId).toMatch(/^key_/);
    expect(await ensureAdminKey(opened, NOW)).toBeNull();
  });
});
