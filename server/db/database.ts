// Opens the database named by DATABASE_URL (docs/reference.md "Configuration"), brings its schema up to date and hands
// out the Prisma client: PostgreSQL through @prisma/adapter-pg, or embedded PGlite (same SQL
// dialect, no server) through pglite-prisma-adapter.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import type { Tracer } from '@opentelemetry/api';
import { countQueries } from './count-queries.ts';
import { loadPglite, loadPostgres, type PgliteDriver } from './drivers.ts';
import { PrismaClient } from './generated/client.ts';
import { applyMigrations, type MigrationSession } from './migrate.ts';
import { lockPgliteDir } from './pglite-lock.mjs';

export interface Database {
  prisma: PrismaClient;
  kind: 'pglite' | 'postgres';
  /** Resolves when the database answers a query through Prisma (for /readyz). */
  ping(): Promise<void>;
  /**
   * One statement on the driver itself, not through Prisma: Prisma's query compiler (WebAssembly)
   * loads and compiles at Prisma's first query, 0.3–1 s of CPU, so what a start must read before it
   * listens is read here and that cost comes after (issue 23, item 13). Not counted in
   * `toolgate_db_queries_total`; not for use while a Prisma transaction may be open on PGlite (one
   * session: the statement would run inside it).
   */
  queryDirect<Row>(sql: string, params?: unknown[]): Promise<Row[]>;
  /** Disconnects Prisma and closes the driver; safe to call twice. */
  close(): Promise<void>;
}

export type DatabaseTarget =
  | { kind: 'pglite' /** absolute folder, or undefined for `pglite:memory` */; dataDir: string | undefined }
  | { kind: 'postgres'; url: string };

/** DATABASE_URL is not one of the accepted forms. The message never repeats the URL (it may hold a password). */
export class DatabaseUrlError extends Error {
  override name = 'DatabaseUrlError';
}

/**
 * What opening the database is doing, for the operator (`npm start` prints it): the first start
 * creates an embedded database (initdb, seconds) and every start with new migrations applies them.
 */
export type OpenProgress =
  | { step: 'creating'; dataDir: string }
  | { step: 'migrating'; migrations: string[] };

export interface OpenOptions {
  onProgress?: (progress: OpenProgress) => void;
  /** When tracing is on: a span per statement (db/count-queries.ts). */
  tracer?: Tracer | undefined;
}

/** How long openDatabase waits for another process (e.g. a Prisma CLI run) to let go of a PGlite folder. */
const PGLITE_LOCK_WAIT_MS = 5_000;

/** Parses `pglite:memory`, `pglite:<dir>` (relative to the working directory) or `postgres(ql)://…`. */
export function parseDatabaseUrl(url: string): DatabaseTarget {
  if (url === 'pglite:memory') return { kind: 'pglite', dataDir: undefined };
  if (url.startsWith('pglite:')) {
    const dir = url.slice('pglite:'.length);
    if (dir.trim() === '')
      throw new DatabaseUrlError('pglite: needs a folder, as in pglite:./.toolgate/db, or pglite:memory');
    return { kind: 'pglite', dataDir: path.resolve(dir) };
  }
  if (url.startsWith('postgresql://') || url.startsWith('postgres://')) {
    try {
      new URL(url);
    } catch {
      throw new DatabaseUrlError('is not a valid postgresql:// URL');
    }
    return { kind: 'postgres', url };
  }
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0];
  throw new DatabaseUrlError(
    `${scheme ? `scheme ${scheme} is not supported` : 'is not a database URL'}: use postgresql://…, postgres://…, pglite:<dir> or pglite:memory`,
  );
}

/**
 * Opens the database, applies pending migrations, and returns the Prisma client over it. Each
 * driver is loaded only when chosen: start-up does not pay for the one it does not use.
 */
export async function openDatabase(url: string, options: OpenOptions = {}): Promise<Database> {
  const target = parseDatabaseUrl(url);
  const onPending = (migrations: string[]) => options.onProgress?.({ step: 'migrating', migrations });
  return target.kind === 'pglite'
    ? openPglite(target.dataDir, options, onPending)
    : openPostgres(target.url, onPending, options.tracer);
}

async function openPglite(
  dataDir: string | undefined,
  options: OpenOptions,
  onPending: (migrations: string[]) => void,
): Promise<Database> {
  let release = () => {};
  if (dataDir) {
    mkdirSync(dataDir, { recursive: true });
    release = await lockPgliteDir(dataDir, { waitMs: PGLITE_LOCK_WAIT_MS });
    // PG_VERSION is written by initdb: without it PGlite creates the database now.
    if (!existsSync(path.join(dataDir, 'PG_VERSION'))) options.onProgress?.({ step: 'creating', dataDir });
  }
  let db: PGlite;
  let PrismaPGlite: PgliteDriver['PrismaPGlite'];
  try {
    const driver = await loadPglite();
    PrismaPGlite = driver.PrismaPGlite;
    db = await driver.PGlite.create(dataDir ?? 'memory://', { pgliteWasmModule: driver.wasmModule });
  } catch (error) {
    release();
    throw pgliteOpenError(dataDir, error);
  }
  const session: MigrationSession = {
    query: async <Row>(sql: string, params?: unknown[]) => (await db.query<Row>(sql, params)).rows,
    exec: async (script) => {
      await db.exec(script);
    },
  };
  try {
    await applyMigrations(session, undefined, onPending);
  } catch (error) {
    await db.close().catch(() => {});
    release();
    throw error;
  }
  const prisma = new PrismaClient({ adapter: countQueries(new PrismaPGlite(db), options.tracer) });
  return database('pglite', prisma, session.query, async () => {
    await db.close();
    release();
  });
}

/** PGlite cannot open a folder written by another PGlite major (another PostgreSQL major). */
function pgliteOpenError(dataDir: string | undefined, cause: unknown): Error {
  const versionFile = dataDir && path.join(dataDir, 'PG_VERSION');
  const version =
    versionFile && existsSync(versionFile) ? readFileSync(versionFile, 'utf8').trim() : undefined;
  const hint = version
    ? ` (the folder holds PostgreSQL ${version} data; a folder made by another PGlite major version cannot be opened: dump it with that version, or use another folder)`
    : '';
  return new Error(`cannot open PGlite database ${dataDir ?? 'in memory'}${hint}`, { cause });
}

async function openPostgres(
  url: string,
  onPending: (migrations: string[]) => void,
  tracer: Tracer | undefined,
): Promise<Database> {
  const { pg, PrismaPg } = await loadPostgres();
  const pool = new pg.Pool({ connectionString: url });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  try {
    const client = await pool.connect();
    try {
      await applyMigrations(
        {
          query: async <Row>(sql: string, params?: unknown[]) =>
            (await client.query(sql, params)).rows as Row[],
          exec: async (script) => {
            await client.query(script);
          },
        },
        undefined,
        onPending,
      );
    } finally {
      client.release();
    }
  } catch (error) {
    await pool.end().catch(() => {});
    throw error;
  }
  const prisma = new PrismaClient({ adapter: countQueries(new PrismaPg(pool), tracer) });
  const queryDirect = async <Row>(sql: string, params?: unknown[]) =>
    (await pool.query(sql, params)).rows as Row[];
  return database('postgres', prisma, queryDirect, () => pool.end());
}

function database(
  kind: Database['kind'],
  prisma: PrismaClient,
  queryDirect: Database['queryDirect'],
  closeDriver: () => Promise<void>,
): Database {
  let closing: Promise<void> | undefined;
  return {
    prisma,
    kind,
    queryDirect,
    async ping() {
      await prisma.$queryRawUnsafe('SELECT 1');
    },
    close() {
      closing ??= (async () => {
        await prisma.$disconnect();
        await closeDriver();
      })();
      return closing;
    },
  };
}
