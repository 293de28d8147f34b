// Applies prisma/migrations/*/migration.sql at server start, the way `prisma migrate deploy` does,
// without loading Prisma's schema engine: the same `_prisma_migrations` table and rows (sha256
// checksum of the file, started_at/finished_at, applied_steps_count), under the same PostgreSQL
// advisory lock, so `prisma migrate status` agrees afterwards and servers starting together against
// one database (or a concurrent `prisma migrate deploy`) apply each migration exactly once.
import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../prisma/migrations/', import.meta.url));

/** The advisory lock key Prisma's schema engine takes around migrations. */
const PRISMA_ADVISORY_LOCK_KEY = 72707369;

/** One database session on the raw driver (a pg client or the PGlite instance). */
export interface MigrationSession {
  query<Row>(sql: string, params?: unknown[]): Promise<Row[]>;
  /** Runs a multi-statement script in one simple query (one implicit transaction), like Prisma. */
  exec(script: string): Promise<void>;
}

export interface Migration {
  name: string;
  script: string;
  checksum: string;
}

export interface MigrateResult {
  /** Migrations applied by this call, in order; empty when the database was up to date. */
  applied: string[];
}

/** A migration that failed now or earlier; the database needs a human (`prisma migrate resolve`). */
export class MigrationError extends Error {
  override name = 'MigrationError';
  constructor(
    message: string,
    readonly migration: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

// Prisma's own definition, so the engine and this runner can take turns on one database.
const CREATE_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

const cache = new Map<string, Promise<Migration[]>>();

/** The migrations in `dir`, in Prisma's order (directory names sorted). Read once per process. */
export function readMigrations(dir: string = MIGRATIONS_DIR): Promise<Migration[]> {
  let migrations = cache.get(dir);
  if (!migrations) {
    migrations = loadMigrations(dir);
    cache.set(dir, migrations);
    migrations.catch(() => cache.delete(dir));
  }
  return migrations;
}

async function loadMigrations(dir: string): Promise<Migration[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort((a, b) => a.localeCompare(b));
  return Promise.all(
    names.map(async (name) => {
      const script = await readFile(path.join(dir, name, 'migration.sql'), 'utf8');
      return { name, script, checksum: createHash('sha256').update(script).digest('hex') };
    }),
  );
}

interface MigrationRow {
  id: string;
  migration_name: string;
  finished_at: Date | string | null;
  rolled_back_at: Date | string | null;
}

/**
 * Applies every migration not yet applied. Applying twice is a no-op. `onPending` hears the names
 * about to be applied (under the lock, before the first), so a start can say why it waits.
 */
export async function applyMigrations(
  session: MigrationSession,
  migrations?: Migration[],
  onPending?: (names: string[]) => void,
): Promise<MigrateResult> {
  const all = migrations ?? (await readMigrations());
  if (await upToDate(session, all)) return { applied: [] };
  await session.query('SELECT pg_advisory_lock($1)', [PRISMA_ADVISORY_LOCK_KEY]);
  try {
    await session.exec(CREATE_MIGRATIONS_TABLE);
    const rows = await session.query<MigrationRow>(
      'SELECT id, migration_name, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at',
    );
    const failed = rows.find((r) => r.finished_at === null && r.rolled_back_at === null);
    if (failed) {
      throw new MigrationError(
        `migration ${failed.migration_name} failed earlier and blocks the others; resolve it with \`prisma migrate resolve\``,
        failed.migration_name,
      );
    }
    const done = new Set(rows.filter((r) => r.rolled_back_at === null).map((r) => r.migration_name));
    const pending = all.filter((migration) => !done.has(migration.name));
    if (pending.length > 0) onPending?.(pending.map((migration) => migration.name));
    const applied: string[] = [];
    for (const migration of pending) {
      await applyOne(session, migration);
      applied.push(migration.name);
    }
    return { applied };
  } finally {
    await session.query('SELECT pg_advisory_unlock($1)', [PRISMA_ADVISORY_LOCK_KEY]);
  }
}

/**
 * What most starts find, told by one statement without the lock: every migration applied and none
 * unfinished. The lock, CREATE TABLE IF NOT EXISTS and the unlock are three more round trips, tens
 * of milliseconds of a start on PGlite (issue 23, item 13). Anything else answers false and the
 * locked path decides, as before: no table yet (a new database), a migration not applied, a row
 * unfinished (failed, or another server applying it right now).
 */
async function upToDate(session: MigrationSession, all: Migration[]): Promise<boolean> {
  let rows: MigrationRow[];
  try {
    rows = await session.query<MigrationRow>(
      'SELECT id, migration_name, finished_at, rolled_back_at FROM "_prisma_migrations"',
    );
  } catch {
    return false;
  }
  if (rows.some((r) => r.finished_at === null && r.rolled_back_at === null)) return false;
  const done = new Set(rows.filter((r) => r.rolled_back_at === null).map((r) => r.migration_name));
  return all.every((migration) => done.has(migration.name));
}

async function applyOne(session: MigrationSession, migration: Migration): Promise<void> {
  const id = randomUUID();
  await session.query(
    'INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count) VALUES ($1, $2, $3, now(), 0)',
    [id, migration.checksum, migration.name],
  );
  try {
    await session.exec(migration.script);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // Same record as Prisma leaves: the row stays unfinished with the error in `logs`.
    await session.query('UPDATE "_prisma_migrations" SET logs = $2 WHERE id = $1', [id, message]);
    throw new MigrationError(`migration ${migration.name} failed: ${message}`, migration.name, {
      cause: error,
    });
  }
  await session.query(
    'UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = applied_steps_count + 1 WHERE id = $1',
    [id],
  );
}
