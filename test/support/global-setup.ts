// Runs once per `vitest run`: builds the migrated templates that test/support/db.ts copies for each
// test database, and removes everything the run created when it ends.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../server/db/database.ts';
import { databaseUrl, findTestPostgres, quoteIdent, type TestDatabaseContext } from './db.ts';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const tmpDir = await mkdtemp(path.join(os.tmpdir(), 'toolgate-test-'));
  const pgliteTemplateDir = path.join(tmpDir, 'template');
  const context: TestDatabaseContext = { runId, tmpDir, pgliteTemplateDir };

  const cleanups: Array<() => Promise<void>> = [() => rm(tmpDir, { recursive: true, force: true })];
  const teardown = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((e) => console.error(e));
  };

  try {
    // Migrating once here spares every test PGlite's ~2.4 s initdb: a copy of this folder opens in ~0.3 s.
    const template = await openDatabase(`pglite:${pgliteTemplateDir}`);
    await template.close();

    const found = await findTestPostgres();
    if ('url' in found) {
      const serverUrl = found.url;
      const prefix = `toolgate_t_${runId}`;
      const templateName = `${prefix}_template`;
      const admin = new pg.Client({ connectionString: serverUrl });
      await admin.connect();
      cleanups.push(async () => {
        // Drops the template and every test database of this run that a test left behind.
        const { rows } = await admin.query<{ datname: string }>(
          'SELECT datname FROM pg_database WHERE datname LIKE $1',
          [`${prefix}\\_%`],
        );
        for (const { datname } of rows)
          await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(datname)} WITH (FORCE)`);
        await admin.end();
      });
      await admin.query(`CREATE DATABASE ${quoteIdent(templateName)}`);
      const templateDb = await openDatabase(databaseUrl(serverUrl, templateName));
      await templateDb.close();
      context.postgres = { serverUrl, prefix, templateName };
    } else {
      console.log(
        `\n*** postgres: SKIPPED — ${found.skipped}; the PostgreSQL and cross-process suites did NOT run (PGlite only) ***\n`,
      );
    }
  } catch (error) {
    await teardown();
    throw error;
  }

  project.provide('toolgateTestDatabases', context);
  return teardown;
}
