import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { type Database, DatabaseUrlError, openDatabase, parseDatabaseUrl } from '../../server/db/database.ts';
import { Prisma } from '../../server/db/generated/client.ts';
import {
  applyMigrations,
  MIGRATIONS_DIR,
  MigrationError,
  type MigrationSession,
  readMigrations,
} from '../../server/db/migrate.ts';
import { createTestDatabase, describeBackends, type TestDatabase } from '../support/db.ts';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');

interface MigrationRow {
  id: string;
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
  applied_steps_count: number;
  logs: string | null;
}

async function expectedMigrations(): Promise<Array<{ name: string; checksum: string }>> {
  const dirs = (await readdir(MIGRATIONS_DIR, { withFileTypes: true })).filter((e) => e.isDirectory());
  return Promise.all(
    dirs
      .map((d) => d.name)
      .sort()
      .map(async (name) => {
        const sql = await readFile(path.join(MIGRATIONS_DIR, name, 'migration.sql'));
        return { name, checksum: createHash('sha256').update(sql).digest('hex') };
      }),
  );
}

function migrationRows(db: Database): Promise<MigrationRow[]> {
  return db.prisma.$queryRawUnsafe<MigrationRow[]>(
    'SELECT id, migration_name, checksum, finished_at, rolled_back_at, applied_steps_count, logs FROM "_prisma_migrations" ORDER BY migration_name',
  );
}

/** A raw driver session on `url`, as server/db/database.ts gives the migration runner. */
async function rawSession(url: string): Promise<MigrationSession & { close(): Promise<void> }> {
  const target = parseDatabaseUrl(url);
  if (target.kind === 'pglite') {
    const db = await PGlite.create(target.dataDir ?? 'memory://');
    return {
      query: async <Row>(sql: string, params?: unknown[]) => (await db.query<Row>(sql, params)).rows,
      exec: async (script) => void (await db.exec(script)),
      close: () => db.close(),
    };
  }
  const client = new pg.Client({ connectionString: target.url });
  await client.connect();
  return {
    query: async <Row>(sql: string, params?: unknown[]) => (await client.query(sql, params)).rows as Row[],
    exec: async (script) => void (await client.query(script)),
    close: () => client.end(),
  };
}

describe('parseDatabaseUrl', () => {
  it('accepts the documented forms', () => {
    expect(parseDatabaseUrl('pglite:memory')).toEqual({ kind: 'pglite', dataDir: undefined });
    expect(parseDatabaseUrl('pglite:./.toolgate/db')).toEqual({
      kind: 'pglite',
      dataDir: path.resolve('.toolgate/db'),
    });
    expect(parseDatabaseUrl('postgresql://u@h:5432/d').kind).toBe('postgres');
    expect(parseDatabaseUrl('postgres://u@h/d').kind).toBe('postgres');
  });

  it.each(['mysql://root:hunter2@localhost/db', 'sqlite:./x.db', '', 'pglite:', 'postgresql://[bad'])(
    'rejects %j with DatabaseUrlError, without echoing it',
    async (url) => {
      const error = await openDatabase(url).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DatabaseUrlError);
      expect((error as Error).name).toBe('DatabaseUrlError');
      expect((error as Error).message).not.toContain('hunter2');
    },
  );
});

/** Migrating a new database runs every migration: under a loaded CI machine PGlite took 25–65 s. */
const MIGRATING_MS = 120_000;

describeBackends('database', (backend) => {
  const open: Database[] = [];
  const created: TestDatabase[] = [];
  const fresh = async (options?: { migrated?: boolean }) => {
    const tdb = await createTestDatabase(backend.name, options);
    created.push(tdb);
    return tdb;
  };
  const openTracked = async (url: string) => {
    const db = await openDatabase(url);
    open.push(db);
    return db;
  };

  afterEach(async () => {
    await Promise.all(open.splice(0).map((db) => db.close()));
    await Promise.all(created.splice(0).map((tdb) => tdb.drop()));
  });

  it(
    'migrates an empty database, and migrating again is a no-op',
    async () => {
      const tdb = await fresh({ migrated: false });
      const first = await openTracked(tdb.url);
      expect(first.kind).toBe(backend.name);
      await first.ping();
      const rows = await migrationRows(first);
      const expected = await expectedMigrations();
      expect(expected.length).toBeGreaterThan(0);
      expect(rows.map((r) => ({ name: r.migration_name, checksum: r.checksum }))).toEqual(expected);
      for (const row of rows) {
        expect(row.finished_at).toBeInstanceOf(Date);
        expect(row.rolled_back_at).toBeNull();
        expect(row.applied_steps_count).toBe(1);
      }
      await first.close();

      const second = await openTracked(tdb.url);
      expect(await migrationRows(second)).toEqual(rows);
    },
    MIGRATING_MS,
  );

  it(
    '`prisma migrate status` agrees the database is up to date',
    async () => {
      const tdb = await fresh();
      const db = await openTracked(tdb.url);
      await db.close(); // PGlite allows one process per folder
      const { stdout } = await run(path.join(ROOT, 'node_modules/.bin/prisma'), ['migrate', 'status'], {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: tdb.url },
      });
      expect(stdout).toContain('Database schema is up to date!');
    },
    MIGRATING_MS,
  );

  it.runIf(backend.name === 'postgres')(
    'two servers opening one empty database at once apply the migrations once',
    async () => {
      const tdb = await fresh({ migrated: false });
      const [a, b] = await Promise.all([openTracked(tdb.url), openTracked(tdb.url)]);
      const rowsA = await migrationRows(a);
      expect(rowsA.map((r) => r.migration_name)).toEqual((await expectedMigrations()).map((m) => m.name));
      expect(await migrationRows(b)).toEqual(rowsA);
    },
  );

  it.runIf(backend.name === 'pglite')(
    'a second open of one PGlite folder waits for the first to close',
    async () => {
      const tdb = await fresh();
      const first = await openTracked(tdb.url);
      let secondOpened = false;
      const second = openTracked(tdb.url).then((db) => {
        secondOpened = true;
        return db;
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(secondOpened).toBe(false);
      await first.close();
      await (await second).ping();
    },
  );

  it.runIf(backend.name === 'pglite')(
    'takes over the lock of a PGlite folder left by a dead process',
    async () => {
      const tdb = await fresh();
      const deadPid = spawnSync(process.execPath, ['-e', '']).pid;
      await writeFile(`${tdb.url.slice('pglite:'.length)}.lock`, `${deadPid}\n${hostname()}\n`);
      await (await openTracked(tdb.url)).ping();
    },
  );

  it.runIf(backend.name === 'pglite')('says so when a folder holds another PostgreSQL major', async () => {
    const tdb = await fresh();
    await writeFile(path.join(tdb.url.slice('pglite:'.length), 'PG_VERSION'), '17\n');
    await expect(openTracked(tdb.url)).rejects.toThrow(/holds PostgreSQL 17 data/);
  });

  it(
    'records a failing migration like Prisma, rolls back its statements and refuses to go on',
    async () => {
      const tdb = await fresh();
      const broken = 'CREATE TABLE "half_done" (x int);\nSELECT 1/0;\n';
      const migrations = [
        ...(await readMigrations()),
        {
          name: '29991231000000_broken',
          script: broken,
          checksum: createHash('sha256').update(broken).digest('hex'),
        },
      ];
      const session = await rawSession(tdb.url);
      try {
        const error = await applyMigrations(session, migrations).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(MigrationError);
        expect((error as MigrationError).migration).toBe('29991231000000_broken');
        const [row] = await session.query<MigrationRow>(
          `SELECT * FROM "_prisma_migrations" WHERE migration_name = '29991231000000_broken'`,
        );
        expect(row).toMatchObject({ finished_at: null, rolled_back_at: null, applied_steps_count: 0 });
        expect(row?.logs).toContain('division by zero');
        const [table] = await session.query<{ t: string | null }>(
          `SELECT to_regclass('half_done')::text AS t`,
        );
        expect(table?.t).toBeNull();
        await expect(applyMigrations(session, migrations)).rejects.toThrow(/failed earlier/);
      } finally {
        await session.close();
      }
    },
    MIGRATING_MS,
  );

  it('checks an up-to-date database with one statement, without the lock', async () => {
    const tdb = await fresh();
    const session = await rawSession(tdb.url);
    const sent: string[] = [];
    try {
      const result = await applyMigrations({
        query: (sql, params) => {
          sent.push(sql);
          return session.query(sql, params);
        },
        exec: (script) => {
          sent.push(script);
          return session.exec(script);
        },
      });
      expect(result).toEqual({ applied: [] });
      expect(sent).toEqual([
        'SELECT id, migration_name, finished_at, rolled_back_at FROM "_prisma_migrations"',
      ]);
    } finally {
      await session.close();
    }
  });

  it('round-trips every model: Bytes, String[], Json, DateTime', async () => {
    const { prisma } = await openTracked((await fresh()).url);
    const at = new Date('2030-01-02T03:04:05.678Z');
    const bytes = Uint8Array.from([0, 1, 2, 253, 254, 255]);

    await prisma.client.create({
      data: {
        id: 'cli_1',
        name: 'Agent One',
        redirectUris: { create: [{ uri: 'https://a.example/cb' }, { uri: 'https://b.example/cb' }] },
        apiKeys: {
          create: {
            id: 'key_1',
            hash: '$argon2id$v=19$...',
            start: 'tg_ab',
            scopes: ['proxy', 'admin:read'],
          },
        },
      },
    });
    const client = await prisma.client.findUniqueOrThrow({
      where: { id: 'cli_1' },
      include: { redirectUris: { orderBy: { uri: 'asc' } }, apiKeys: true },
    });
    expect(client.createdAt).toBeInstanceOf(Date);
    expect(client.redirectUris.map((r) => r.uri)).toEqual(['https://a.example/cb', 'https://b.example/cb']);
    expect(client.apiKeys[0]).toMatchObject({ scopes: ['proxy', 'admin:read'], revokedAt: null, name: null });

    const openapi = {
      openapi: '3.1.0',
      paths: { '/x': { get: { operationId: 'getX' } } },
      list: [1, 'two', null],
    };
    await prisma.app.create({
      data: {
        id: 'app_1',
        provider: 'example',
        openapi: JSON.stringify(openapi),
        authType: 'oauth2',
        authConfig: { scopes: ['read'], openapi },
        authSecret: bytes,
      },
    });
    const app = await prisma.app.findUniqueOrThrow({ where: { id: 'app_1' } });
    expect(app.openapi).toBe(JSON.stringify(openapi));
    expect(app.authConfig).toEqual({ scopes: ['read'], openapi });
    expect(Array.from(app.authSecret ?? [])).toEqual(Array.from(bytes));
    expect(app.updatedAt).toBeInstanceOf(Date);

    await prisma.connection.create({
      data: {
        id: 'con_1',
        clientId: 'cli_1',
        userId: 'u1',
        appId: 'app_1',
        status: 'active',
        scopes: [],
        expiresAt: at,
        credential: bytes,
      },
    });
    const connection = await prisma.connection.findUniqueOrThrow({
      where: { clientId_userId_appId: { clientId: 'cli_1', userId: 'u1', appId: 'app_1' } },
    });
    expect(connection.expiresAt?.toISOString()).toBe(at.toISOString());
    expect(connection.scopes).toEqual([]);
    expect(Array.from(connection.credential)).toEqual(Array.from(bytes));

    await prisma.oAuthState.create({
      data: {
        id: 'st_1',
        stateHash: 'a'.repeat(64),
        clientId: 'cli_1',
        userId: 'u1',
        appId: 'app_1',
        redirectUri: 'https://a.example/cb',
        verifier: bytes,
        expiresAt: at,
      },
    });
    const state = await prisma.oAuthState.findUniqueOrThrow({ where: { stateHash: 'a'.repeat(64) } });
    expect(state.expiresAt.getTime()).toBe(at.getTime());
    expect(state.usedAt).toBeNull();

    // The stored answer is its exact JSON text (TEXT column), not a JSONB value.
    const body = JSON.stringify({ status: 'ok', data: { nested: [true, 1.5] } });
    await prisma.idempotencyRecord.create({
      data: {
        apiKeyId: 'key_1',
        key: 'idem-1',
        fingerprint: 'f'.repeat(64),
        state: 'done',
        leaseUntil: at,
        responseStatus: 200,
        responseBody: body,
        createdAt: at,
        expiresAt: new Date(at.getTime() + 86_400_000),
      },
    });
    const record = await prisma.idempotencyRecord.findUniqueOrThrow({
      where: { apiKeyId_key: { apiKeyId: 'key_1', key: 'idem-1' } },
    });
    expect(record).toMatchObject({ responseStatus: 200, responseBody: body, state: 'done' });

    // Deleting the client cascades to its redirect URIs and keys.
    await prisma.client.delete({ where: { id: 'cli_1' } });
    expect(await prisma.redirectUri.count()).toBe(0);
    expect(await prisma.apiKey.count()).toBe(0);
  });

  it('a compound unique violation is P2002 and rolls back the interactive transaction', async () => {
    const { prisma } = await openTracked((await fresh()).url);
    await prisma.app.create({
      data: { id: 'app_1', provider: 'p', openapi: '{}', authType: 'none', authConfig: {} },
    });
    const connection = (id: string) => ({
      id,
      clientId: 'cli_1',
      userId: 'u1',
      appId: 'app_1',
      status: 'active',
      scopes: ['a'],
      credential: Uint8Array.from([1]),
    });

    const error = await prisma
      .$transaction(async (tx) => {
        await tx.connection.create({ data: connection('con_1') });
        await tx.connection.create({ data: connection('con_2') });
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Prisma.PrismaClientKnownRequestError);
    expect((error as Prisma.PrismaClientKnownRequestError).code).toBe('P2002');
    expect(await prisma.connection.count()).toBe(0);

    // The client is still usable after the rollback.
    await prisma.connection.create({ data: connection('con_3') });
    expect(await prisma.connection.count()).toBe(1);
  });
});
