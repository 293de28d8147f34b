#!/usr/bin/env node
// Stand-in for Prisma's native `schema-engine` binary, which cannot be downloaded on our machines.
// prisma.config.ts names this file in PRISMA_SCHEMA_ENGINE_BINARY; the unmodified Prisma CLI then
// spawns it exactly like the native engine:
//   schema-engine --version
//   schema-engine --datasource '{"url":…}' cli can-connect-to-database | create-database | drop-database
//   schema-engine --datamodels <file>… --datasource '{"url":…}'   (JSON-RPC 2.0, one message per line:
//                                                                 requests on stdin, responses on stdout,
//                                                                 JSON log lines on stderr)
// JSON-RPC requests are forwarded to the method of the same name of Prisma's WebAssembly schema
// engine (@prisma/schema-engine-wasm, pinned to the CLI's engine build), which reaches the database
// through a driver adapter chosen from the URL: `pglite:memory`, `pglite:<dir>` or `postgres(ql)://`.
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import readline from 'node:readline';
import { lockPgliteDir } from '../server/db/pglite-lock.mjs';

const require = createRequire(import.meta.url);

// stdout carries JSON-RPC only: anything a library prints goes to stderr instead.
console.log = console.info = console.debug = (...args) => console.error(...args);

/** SchemaEngine members that are not engine methods. */
const NOT_RPC = new Set(['constructor', 'free', '__destroy_into_raw']);

const PG_CHAR_OID = 18;
const PG_TEXT_OID = 25;

class EngineCliError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

function parseArgs(argv) {
  const args = { datamodels: [], datasource: undefined, cli: undefined, version: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--version' || arg === '-V') args.version = true;
    else if (arg === '--datamodels' || arg === '-d') args.datamodels.push(argv[++i]);
    else if (arg === '--datasource') args.datasource = JSON.parse(argv[++i]);
    else if (arg === '--enabled-preview-features' || arg === '--extension-types') i++;
    else if (arg === 'cli') args.cli = argv[++i];
  }
  return args;
}

function engineHash() {
  // The package version is `<prisma version>-<n>.<engine commit>`.
  const glue = require.resolve('@prisma/schema-engine-wasm/schema_engine_bg');
  const { version } = JSON.parse(readFileSync(path.join(path.dirname(glue), 'package.json'), 'utf8'));
  return version.split('.').pop();
}

function logLine(level, fields, target = 'schema_engine::logger') {
  return JSON.stringify({ timestamp: new Date().toISOString(), level, fields, target });
}

// ---------------------------------------------------------------------------------------------
// Where the database is

function parseUrl(url) {
  if (typeof url !== 'string' || url === '') {
    // Diffing schema files needs no database: an in-memory PGlite is opened only if asked for.
    return { kind: 'pglite', dataDir: undefined };
  }
  if (url === 'pglite:memory') return { kind: 'pglite', dataDir: undefined };
  if (url.startsWith('pglite:') && url.length > 'pglite:'.length) {
    return { kind: 'pglite', dataDir: path.resolve(url.slice('pglite:'.length)) };
  }
  if (url.startsWith('postgresql://') || url.startsWith('postgres://')) return { kind: 'postgres', url };
  throw new EngineCliError(
    'P1013',
    'The provided database string is invalid. Expected `postgresql://…`, `postgres://…`, `pglite:memory` or `pglite:<dir>`.',
  );
}

/** Host, port and database of a PostgreSQL URL, for messages (never the credentials). */
function describePg(url) {
  const u = new URL(url);
  return { location: `${u.hostname}:${u.port || '5432'}`, database: decodeURIComponent(u.pathname.slice(1)) };
}

function withDatabase(url, database) {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}

function quoteIdent(name) {
  return `"${name.replaceAll('"', '""')}"`;
}

// ---------------------------------------------------------------------------------------------
// pg: a pool whose results report PostgreSQL's internal "char" type (OID 18, used all over the
// catalog the engine introspects) as text, because @prisma/adapter-pg rejects OID 18.

async function loadPg() {
  const { default: pg } = await import('pg');
  const fixFields = (result) => {
    for (const r of Array.isArray(result) ? result : [result]) {
      for (const field of r?.fields ?? [])
        if (field.dataTypeID === PG_CHAR_OID) field.dataTypeID = PG_TEXT_OID;
    }
    return result;
  };
  class CharAsTextClient extends pg.Client {
    query(config, values, callback) {
      if (typeof values === 'function') {
        callback = values;
        values = undefined;
      }
      if (typeof callback === 'function') {
        return super.query(config, values, (err, res) => callback(err, err ? res : fixFields(res)));
      }
      const ret = super.query(config, values);
      return typeof ret?.then === 'function' ? ret.then(fixFields) : ret;
    }
  }
  class CharAsTextPool extends pg.Pool {
    constructor(options) {
      super({ ...options, Client: CharAsTextClient });
    }
  }
  return { pg, CharAsTextPool };
}

function pgErrorToEngineError(error, url) {
  const { location, database } = describePg(url);
  switch (error?.code) {
    case '3D000':
      return new EngineCliError(
        'P1003',
        `Database \`${database}\` does not exist on the database server at \`${location}\`.`,
      );
    case '28P01':
    case '28000':
      return new EngineCliError('P1000', `Authentication failed against database server at \`${location}\`.`);
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
      return new EngineCliError('P1001', `Can't reach database server at \`${location}\`.`);
    default:
      return new EngineCliError(undefined, String(error?.message ?? error));
  }
}

/** Runs `fn` with a client on another database of the same server (to create or drop databases). */
async function withMaintenanceClient(url, fn) {
  const { pg } = await loadPg();
  let lastError;
  for (const database of new Set(['postgres', 'template1', describePg(url).database])) {
    const client = new pg.Client({ connectionString: withDatabase(url, database) });
    try {
      await client.connect();
    } catch (error) {
      lastError = error;
      await client.end().catch(() => {});
      continue;
    }
    try {
      return await fn(client);
    } finally {
      await client.end().catch(() => {});
    }
  }
  throw lastError;
}

// ---------------------------------------------------------------------------------------------
// Driver adapter factories (SqlMigrationAwareDriverAdapterFactory) with the fixes the engine needs

/** Both adapters get an executeScript that sends the whole script in one simple query and awaits it,
 * like the native engine: adapter-pg splits on every `;`, the PGlite adapter does not await. */
function withScriptRunner(adapter, run) {
  adapter.executeScript = async (script) => {
    try {
      await run(script);
    } catch (error) {
      adapter.onError(error);
    }
  };
  return adapter;
}

async function pgliteFactory(dataDir) {
  const { PGlite } = await import('@electric-sql/pglite');
  const { PrismaPGlite } = await import('pglite-prisma-adapter');
  const open = [];
  let main;
  let release = () => {};
  const openDb = async (dir) => {
    if (dir) {
      mkdirSync(dir, { recursive: true });
      // A previous CLI step (or a server) may still hold the folder: PGlite is single-process.
      release = await lockPgliteDir(dir, { waitMs: 15_000 });
    }
    const db = await PGlite.create(dir ?? 'memory://');
    open.push(db);
    return db;
  };
  const adapterFor = async (db) => withScriptRunner(await new PrismaPGlite(db).connect(), (s) => db.exec(s));
  return {
    provider: 'postgres',
    adapterName: 'pglite-prisma-adapter',
    /** Opens the folder before the engine starts: errors thrown inside the engine lose their message. */
    async open() {
      main ??= openDb(dataDir);
      await main;
    },
    async connect() {
      main ??= openDb(dataDir);
      return adapterFor(await main);
    },
    async connectToShadowDb() {
      const db = await openDb(undefined);
      const adapter = await adapterFor(db);
      adapter.dispose = () => db.close();
      return adapter;
    },
    async close() {
      // Close cleanly so a folder is never left for crash recovery.
      await Promise.all(open.map((db) => (db.closed ? undefined : db.close().catch(() => {}))));
      release();
    },
  };
}

async function postgresFactory(url, shadowDatabaseUrl) {
  const { CharAsTextPool } = await loadPg();
  const { PrismaPg } = await import('@prisma/adapter-pg');
  const pools = new Set();
  const shadowDatabases = new Set();
  const newPool = (connectionString) => {
    const pool = new CharAsTextPool({ connectionString, max: 4 });
    pool.on('error', () => {});
    pools.add(pool);
    return pool;
  };
  const endPool = async (pool) => {
    pools.delete(pool);
    await pool.end().catch(() => {});
  };
  const adapterFor = async (pool) =>
    withScriptRunner(await new PrismaPg(pool).connect(), (s) => pool.query(s));
  const dropShadow = async (name) => {
    await withMaintenanceClient(url, async (client) => {
      await client
        .query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`)
        .catch(() => client.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)}`));
    });
    shadowDatabases.delete(name);
  };
  let main;
  return {
    provider: 'postgres',
    adapterName: '@prisma/adapter-pg',
    async connect() {
      main ??= newPool(url);
      return adapterFor(main);
    },
    // adapter-pg's own shadow database ends up connected to the main database when given a URL:
    // create a throwaway database on the same server instead, and drop it when the engine is done.
    async connectToShadowDb() {
      if (shadowDatabaseUrl) {
        const pool = newPool(shadowDatabaseUrl);
        const adapter = await adapterFor(pool);
        adapter.dispose = () => endPool(pool);
        return adapter;
      }
      const name = `prisma_migrate_shadow_db_${randomUUID().replaceAll('-', '')}`;
      await withMaintenanceClient(url, (client) => client.query(`CREATE DATABASE ${quoteIdent(name)}`));
      shadowDatabases.add(name);
      const pool = newPool(withDatabase(url, name));
      const adapter = await adapterFor(pool);
      adapter.dispose = async () => {
        await endPool(pool);
        await dropShadow(name);
      };
      return adapter;
    },
    async close() {
      await Promise.all([...pools].map(endPool));
      for (const name of shadowDatabases) await dropShadow(name).catch(() => {});
    },
  };
}

// ---------------------------------------------------------------------------------------------
// `cli <command>`: answered without the wasm engine

async function runCli(command, datasource) {
  const target = parseUrl(datasource?.url);
  if (target.kind === 'pglite') {
    // PGlite creates its folder on first open: "can connect" means the folder can be made.
    if (command === 'can-connect-to-database' || command === 'create-database') {
      if (target.dataDir) mkdirSync(target.dataDir, { recursive: true });
      return;
    }
    if (command === 'drop-database') {
      if (target.dataDir) {
        const release = await lockPgliteDir(target.dataDir);
        rmSync(target.dataDir, { recursive: true, force: true });
        release();
      }
      return;
    }
    throw new EngineCliError(undefined, `Unknown cli command: ${command}`);
  }
  const { url } = target;
  const { database } = describePg(url);
  try {
    if (command === 'can-connect-to-database') {
      const { pg } = await loadPg();
      const client = new pg.Client({ connectionString: url });
      try {
        await client.connect();
        await client.query('SELECT 1');
      } finally {
        await client.end().catch(() => {});
      }
    } else if (command === 'create-database') {
      await withMaintenanceClient(url, (client) => client.query(`CREATE DATABASE ${quoteIdent(database)}`));
    } else if (command === 'drop-database') {
      await withMaintenanceClient(url, (client) => client.query(`DROP DATABASE ${quoteIdent(database)}`));
    } else {
      throw new EngineCliError(undefined, `Unknown cli command: ${command}`);
    }
  } catch (error) {
    throw error instanceof EngineCliError ? error : pgErrorToEngineError(error, url);
  }
}

// ---------------------------------------------------------------------------------------------
// JSON-RPC server around the wasm engine

// Where the wasm engine's panic hook leaves the reason before it traps with `unreachable`.
let panicMessage;
globalThis.PRISMA_WASM_PANIC_REGISTRY = {
  set_message(message) {
    panicMessage = message;
  },
};

async function loadWasmEngine() {
  const bgPath = require.resolve('@prisma/schema-engine-wasm/schema_engine_bg');
  const bg = await import('@prisma/schema-engine-wasm/schema_engine_bg');
  // The package's entry point imports the .wasm as an ES module, which Node 20 cannot do: instantiate
  // it by hand with the wasm-bindgen glue as its import object.
  const bytes = await readFile(bgPath.replace(/\.js$/, '.wasm'));
  const { instance } = await WebAssembly.instantiate(bytes, { './schema_engine_bg.js': bg });
  bg.__wbg_set_wasm(instance.exports);
  instance.exports.__wbindgen_start();
  return bg;
}

function errorResponse(id, error) {
  const isPanic = error instanceof WebAssembly.RuntimeError;
  const message = isPanic && panicMessage ? panicMessage : String(error?.message ?? error);
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: 4466,
      // The CLI shows this one for panics, and data.message otherwise.
      message: isPanic ? message : 'An error happened. Check the data field for details.',
      data: {
        is_panic: isPanic,
        message,
        backtrace: isPanic ? error?.stack : undefined,
        error_code: error?.code,
        meta: error?.meta,
      },
    },
  };
}

async function serveJsonRpc(args) {
  const target = parseUrl(args.datasource?.url);
  const factory =
    target.kind === 'pglite'
      ? await pgliteFactory(target.dataDir)
      : await postgresFactory(target.url, args.datasource?.shadowDatabaseUrl);
  const datamodels = args.datamodels.length
    ? args.datamodels.map((file) => [file, readFileSync(file, 'utf8')])
    : undefined;

  let enginePromise;
  const engine = () => {
    enginePromise ??= (async () => {
      await factory.open?.();
      const bg = await loadWasmEngine();
      const { bindMigrationAwareSqlAdapterFactory } = await import('@prisma/driver-adapter-utils');
      return bg.SchemaEngine.new(
        { datamodels },
        (line) => process.stderr.write(`${line}\n`),
        bindMigrationAwareSqlAdapterFactory(factory),
      );
    })();
    return enginePromise;
  };

  // Methods of the native engine that the wasm build lacks.
  const extraMethods = {
    getDatabaseVersion: async (params) => (await engine()).version(params),
    createDatabase: async (params) => {
      await runCli(
        'create-database',
        params?.datasource?.tag === 'ConnectionString' ? params.datasource : args.datasource,
      );
      return { databaseName: target.kind === 'postgres' ? describePg(target.url).database : 'pglite' };
    },
  };

  // evaluateDataLoss and createMigration take the shadow schema of the migrations from a cache that
  // only devDiagnostic fills (the wasm engine hands them no shadow database factory). `migrate dev`
  // on a database that was behind calls applyMigrations in between, so the full list is missing
  // from the cache: fill it with a devDiagnostic on the same list, then retry once.
  const callEngine = async (instance, method, params) => {
    try {
      return await instance[method](params);
    } catch (error) {
      const needsCache = method === 'evaluateDataLoss' || method === 'createMigration';
      if (
        !needsCache ||
        !/shadow DB must be provided through an external factory/.test(String(error?.message))
      ) {
        throw error;
      }
      await instance.devDiagnostic({ migrationsList: params.migrationsList, filters: params.filters });
      return instance[method](params);
    }
  };

  const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
  let current;
  let printRequests = 0;
  let shuttingDown = false;
  const shutdown = async (code) => {
    if (shuttingDown) return;
    shuttingDown = true;
    await factory.close().catch(() => {});
    process.exit(code);
  };
  // A malformed request can make the wasm glue throw outside of any promise: answer it, then stop
  // like the native engine does on a panic (that request's promise would never settle).
  process.on('uncaughtException', (error) => {
    if (current !== undefined) send(errorResponse(current, error));
    process.stderr.write(`${logLine('ERROR', { message: String(error?.message ?? error) })}\n`);
    void shutdown(1);
  });

  const handle = async (line) => {
    if (line.trim() === '') return;
    let request;
    try {
      request = JSON.parse(line);
    } catch {
      send({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
      return;
    }
    const { id, method, params } = request;
    // Notifications need no answer; the CLI's acknowledgements of our `print` requests carry no method.
    if (id === undefined || typeof method !== 'string') return;
    current = id;
    try {
      let result;
      if (Object.hasOwn(extraMethods, method)) result = await extraMethods[method](params);
      else {
        const instance = await engine();
        const proto = Object.getPrototypeOf(instance);
        if (!Object.hasOwn(proto, method) || typeof proto[method] !== 'function' || NOT_RPC.has(method)) {
          send({ jsonrpc: '2.0', id, error: { code: -32601, message: `Method not found: ${method}` } });
          return;
        }
        result = await callEngine(instance, method, params);
      }
      if (method === 'diff' && typeof result?.stdout === 'string') {
        // The wasm engine returns the diff; the native one asks the CLI to print it (the CLI's
        // `--output` captures what it prints), so do the same.
        send({
          jsonrpc: '2.0',
          id: `print-${++printRequests}`,
          method: 'print',
          params: { content: result.stdout },
        });
        result = { ...result, stdout: null };
      }
      send({ jsonrpc: '2.0', id, result: result ?? null });
    } catch (error) {
      send(errorResponse(id, error));
      if (error instanceof WebAssembly.RuntimeError) await shutdown(101);
    } finally {
      current = undefined;
    }
  };

  let queue = Promise.resolve();
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
  rl.on('line', (line) => {
    queue = queue.then(() => handle(line));
  });
  rl.on('close', () => queue.then(() => shutdown(0)));
  // The CLI ends stdin and then sends SIGTERM right away: still close the databases properly.
  for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => queue.then(() => shutdown(0)));
}

// ---------------------------------------------------------------------------------------------

const args = parseArgs(process.argv.slice(2));
if (args.version) {
  process.stdout.write(`schema-engine-cli ${engineHash()}\n`);
} else if (args.cli) {
  try {
    await runCli(args.cli, args.datasource);
  } catch (error) {
    // The CLI skips the first stderr line and reads the error from a schema_engine::logger line.
    process.stderr.write(
      `${logLine('INFO', { message: 'Starting schema engine CLI' }, 'schema_engine_cli')}\n`,
    );
    process.stderr.write(
      logLine('ERROR', {
        is_panic: false,
        error_code: error?.code,
        message: String(error?.message ?? error),
      }),
    );
    process.exitCode = 1;
  }
} else {
  await serveJsonRpc(args);
}
