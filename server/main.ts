import { createServer, type Server } from 'node:net';
import path from 'node:path';
import type { FirstAdminKey } from './admin/api-keys.ts';
import type { App } from './app.ts';
import { type Config, defaultPublicUrl, loadConfig } from './config.ts';
import { KmsConfigError } from './crypto/kms/kms.ts';
import type { OpenProgress } from './db/database.ts';
import { preloadDatabase } from './db/drivers.ts';
import { createLogger } from './logger.ts';

/**
 * Entry point (`npm start` runs the built copy, `npm run dev` this file through tsx):
 * config → port → database (migrated) → first admin key → HTTP. Lines for the operator go to
 * stderr prefixed `toolgate: `; the JSON log goes to stdout. SIGINT/SIGTERM shut down gracefully,
 * also while starting, so the port and the PGlite folder are always freed.
 */

const say = (line: string) => process.stderr.write(`toolgate: ${line}\n`);

function fail(line: string): never {
  say(line);
  process.exit(1);
}

/** What a connection gets while the server is starting: the answer of /readyz when not ready. */
const STARTING =
  'HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: 12\r\n' +
  'retry-after: 1\r\nconnection: close\r\n\r\n{"ok":false}';

/**
 * Binds the port first: a port in use fails before the database is opened or migrated. Until the
 * HTTP server takes the socket over, a connection gets 503 at once instead of waiting unanswered.
 */
function reservePort(config: Config): Promise<Server> {
  return new Promise((resolve, reject) => {
    const socket = createServer((connection) => {
      connection.on('error', () => {});
      connection.setTimeout(5_000, () => connection.destroy());
      // Answer once the request is in: closing with it unread would reset the connection instead.
      connection.once('data', () => connection.end(STARTING));
    });
    socket.once('error', reject);
    socket.listen(config.port, config.host, () => {
      socket.off('error', reject);
      resolve(socket);
    });
  });
}

/** The slow steps of a start, said while they run (a first start is silent for seconds otherwise). */
function describeProgress(progress: OpenProgress): string {
  if (progress.step === 'creating') {
    const relative = path.relative(process.cwd(), progress.dataDir);
    const where = relative && !relative.startsWith('..') ? `./${relative}` : progress.dataDir;
    return `creating the embedded database in ${where} (first start only, a few seconds)…`;
  }
  const count = progress.migrations.length;
  return `migrating the database: ${count} migration${count === 1 ? '' : 's'} to apply…`;
}

const WILDCARD_HOSTS = new Set(['0.0.0.0', '[::]']);

async function main(): Promise<void> {
  const loaded = loadConfig(process.env);
  if (!loaded.ok) fail(`configuration error: ${loaded.error.variable} ${loaded.error.problem}`);
  const config = loaded.value;
  const logger = createLogger(config.logLevel);
  // The database's driver loads (and PGlite's WebAssembly compiles, on V8's background threads)
  // while the server's modules load below: the server is imported, not a static import of this
  // entry, so that this line runs first (issue 23, item 13).
  preloadDatabase(config.databaseUrl);
  const server = Promise.all([import('./app.ts'), import('./admin/api-keys.ts')]);
  // Awaited after the port is bound; a failure to load then ends main() as a static import's would.
  server.catch(() => {});

  let app: App | undefined;
  let stopping: string | undefined;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = signal;
    logger.info({ signal }, 'shutting down');
    // While starting, main() sees `stopping` once the step in flight is done and closes then.
    if (app) void close(app);
  };
  const close = (running: App) =>
    running.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));

  const port = await reservePort(config).catch((error: NodeJS.ErrnoException) =>
    fail(
      `cannot listen on ${config.host}:${config.port}: ${error.code === 'EADDRINUSE' ? 'the port is in use' : error.message}`,
    ),
  );
  if (stopping) process.exit(0);

  const [{ createApp }, { ensureAdminKey }] = await server;
  if (stopping) process.exit(0);
  try {
    app = await createApp(config, { logger, onProgress: (progress) => say(describeProgress(progress)) });
  } catch (error) {
    port.close();
    // A KMS message names the setting (e.g. a KEK file of the wrong size or mode); otherwise the
    // usual cause is an unreachable or unusable DATABASE_URL. One line, no stack.
    const message = error instanceof Error ? error.message : String(error);
    fail(error instanceof KmsConfigError ? `configuration error: ${message}` : `start-up failed: ${message}`);
  }
  if (stopping) return void close(app);

  let firstKey: FirstAdminKey = null;
  if (!config.adminKey) {
    try {
      firstKey = await ensureAdminKey(app.deps.db, new Date(app.deps.clock.now()));
    } catch (error) {
      await app.close().catch(() => {});
      fail(`start-up failed: cannot create the admin key: ${(error as Error).message}`);
    }
  }
  const url = await app.listen(port);
  logger.info({ url, publicUrl: config.publicUrl, database: app.deps.db.kind }, 'toolgate listening');

  // One write, so a reader sees the start-up lines together.
  const defaulted = config.publicUrl === defaultPublicUrl(config.host, config.port);
  const lines = [`listening on ${url}; API reference at ${defaulted ? url : config.publicUrl}/docs`];
  if (firstKey) {
    lines.push(
      `admin key: ${firstKey.apiKey}`,
      `that admin key (${firstKey.keyId}) is shown this once and only its hash is stored: keep it, e.g. export TOOLGATE_ADMIN_KEY=<key> for npm run admin`,
    );
  }
  if (WILDCARD_HOSTS.has(new URL(config.publicUrl).hostname)) {
    lines.push(
      `warning: PUBLIC_URL is ${config.publicUrl}, a wildcard address no browser can reach: OAuth providers would redirect users to ${config.publicUrl}/handleOAuthCallback. Set PUBLIC_URL to the address users reach this server at.`,
    );
  }
  process.stderr.write(lines.map((line) => `toolgate: ${line}\n`).join(''));
  if (stopping) void close(app);
}

void main();
