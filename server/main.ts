import { createApp } from './app.ts';
import { loadConfig } from './config.ts';
import { KmsConfigError } from './crypto/kms/kms.ts';
import { createLogger } from './logger.ts';

/** Entry point: config → database (migrated) → HTTP server; SIGINT/SIGTERM shut down gracefully. */
async function main(): Promise<void> {
  const loaded = loadConfig(process.env);
  if (!loaded.ok) {
    process.stderr.write(`toolgate: configuration error: ${loaded.variable} ${loaded.problem}\n`);
    process.exit(1);
  }
  const { config } = loaded;
  const logger = createLogger(config.logLevel);
  let app: Awaited<ReturnType<typeof createApp>>;
  try {
    app = await createApp(config, { logger });
  } catch (error) {
    if (error instanceof KmsConfigError) {
      // The message names the setting (e.g. a KEK file of the wrong size or mode).
      process.stderr.write(`toolgate: configuration error: ${error.message}\n`);
      process.exit(1);
    }
    // One line, no stack: the usual cause is an unreachable or unusable DATABASE_URL.
    process.stderr.write(
      `toolgate: start-up failed: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  }
  const url = await app.listen().catch((error: Error) => {
    process.stderr.write(`toolgate: cannot listen on ${config.host}:${config.port}: ${error.message}\n`);
    process.exit(1);
  });
  logger.info({ url, publicUrl: config.publicUrl, database: app.deps.db.kind }, 'toolgate listening');

  const shutdown = (signal: string) => {
    logger.info({ signal }, 'shutting down');
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
}

void main();
