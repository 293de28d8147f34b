// Test databases on every backend: PGlite always, PostgreSQL when a server is reachable:
// TEST_DATABASE_URL (any existing database on it), else postgresql://postgres@127.0.0.1:5432/postgres.
// Each test database is a copy of a template migrated once per run by test/support/global-setup.ts.
import { randomUUID } from 'node:crypto';
import { cpSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { describe, inject, it } from 'vitest';

export type BackendName = 'pglite' | 'postgres';

export interface Backend {
  name: BackendName;
}

export interface TestDatabase {
  /** A DATABASE_URL for openDatabase (`pglite:<dir>` or `postgresql://…`). */
  url: string;
  /** Removes the database; close every client on it first. */
  drop(): Promise<void>;
}

/** What the global setup hands to the test workers. */
export interface TestDatabaseContext {
  runId: string;
  tmpDir: string;
  pgliteTemplateDir: string;
  postgres?: { serverUrl: string; prefix: string; templateName: string };
}

declare module 'vitest' {
  export interface ProvidedContext {
    toolgateTestDatabases: TestDatabaseContext;
  }
}

/** The PostgreSQL `npm test` uses when TEST_DATABASE_URL is unset (the one every CI machine has). */
export const DEFAULT_TEST_DATABASE_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';

/**
 * The PostgreSQL server of this run: TEST_DATABASE_URL when set (`off` turns PostgreSQL off), else
 * the default one if it answers within a second. Called once, by the global setup.
 */
export async function findTestPostgres(
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ url: string } | { skipped: string }> {
  const configured = env.TEST_DATABASE_URL;
  if (configured === 'off') return { skipped: 'TEST_DATABASE_URL=off' };
  if (configured) return { url: configured };
  const client = new pg.Client({
    connectionString: DEFAULT_TEST_DATABASE_URL,
    connectionTimeoutMillis: 1_000,
  });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return { url: DEFAULT_TEST_DATABASE_URL };
  } catch (error) {
    return { skipped: `no PostgreSQL at ${DEFAULT_TEST_DATABASE_URL} (${(error as Error).message})` };
  } finally {
    await client.end().catch(() => {});
  }
}

/** true when this run has a PostgreSQL server (decided once by the global setup). */
export function hasPostgres(): boolean {
  return inject('toolgateTestDatabases').postgres !== undefined;
}

/** The backends this run covers: pglite always, postgres when the run has a PostgreSQL server. */
export function backends(): Backend[] {
  return hasPostgres() ? [{ name: 'pglite' }, { name: 'postgres' }] : [{ name: 'pglite' }];
}

/** Registers the suite once per backend; without PostgreSQL a visibly skipped postgres suite. */
export function describeBackends(title: string, fn: (backend: Backend) => void): void {
  for (const backend of backends()) describe(`${title} [${backend.name}]`, () => fn(backend));
  if (!hasPostgres()) {
    describe.skip(`${title} [postgres: SKIPPED, no PostgreSQL server this run]`, () => {
      it('runs on PostgreSQL when one is reachable (TEST_DATABASE_URL or the default)', () => {});
    });
  }
}

export interface CreateTestDatabaseOptions {
  /** false: an empty database that openDatabase has yet to migrate (PGlite then pays its initdb). */
  migrated?: boolean;
}

let counter = 0;

/** A fresh database of its own, already migrated unless `{ migrated: false }`. */
export async function createTestDatabase(
  backend: BackendName,
  options: CreateTestDatabaseOptions = {},
): Promise<TestDatabase> {
  const context = inject('toolgateTestDatabases');
  const migrated = options.migrated ?? true;
  if (backend === 'pglite') {
    const dir = path.join(context.tmpDir, `db-${randomUUID()}`);
    // cpSync takes ~0.1 s for the ~40 MB folder; fs.promises.cp takes ten times as long on Node 20.
    if (migrated) cpSync(context.pgliteTemplateDir, dir, { recursive: true });
    else await mkdir(dir);
    return { url: `pglite:${dir}`, drop: () => rm(dir, { recursive: true, force: true }) };
  }

  const server = context.postgres;
  if (!server)
    throw new Error('createTestDatabase("postgres") needs a PostgreSQL server (TEST_DATABASE_URL)');
  const name = `${server.prefix}_${process.pid}_${++counter}`;
  await withAdmin(server.serverUrl, (admin) =>
    admin.query(
      migrated
        ? `CREATE DATABASE ${quoteIdent(name)} TEMPLATE ${quoteIdent(server.templateName)}`
        : `CREATE DATABASE ${quoteIdent(name)}`,
    ),
  );
  return {
    url: databaseUrl(server.serverUrl, name),
    drop: async () => {
      await withAdmin(server.serverUrl, (admin) =>
        admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`),
      );
    },
  };
}

async function withAdmin<T>(serverUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** `url` with its database replaced by `database`. */
export function databaseUrl(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
