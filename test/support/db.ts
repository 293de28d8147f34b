// Test databases on every backend: PGlite always, PostgreSQL when TEST_DATABASE_URL names a server
// (any existing database on it, e.g. postgresql://postgres@127.0.0.1:5432/postgres).
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

const SKIPPED_POSTGRES = 'postgres: skipped (TEST_DATABASE_URL not set)';

/** The backends this run covers: pglite always, postgres only when TEST_DATABASE_URL is set. */
export function backends(): Backend[] {
  return process.env.TEST_DATABASE_URL ? [{ name: 'pglite' }, { name: 'postgres' }] : [{ name: 'pglite' }];
}

/** Registers the suite once per backend; without TEST_DATABASE_URL a visibly skipped postgres suite. */
export function describeBackends(title: string, fn: (backend: Backend) => void): void {
  for (const backend of backends()) describe(`${title} [${backend.name}]`, () => fn(backend));
  if (!process.env.TEST_DATABASE_URL) {
    describe.skip(`${title} [${SKIPPED_POSTGRES}]`, () => {
      it('runs on PostgreSQL when TEST_DATABASE_URL is set', () => {});
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
  if (!server) throw new Error('createTestDatabase("postgres") needs TEST_DATABASE_URL');
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
