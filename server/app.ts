import type { Server } from 'node:http';
import type { AddressInfo, Server as NetServer } from 'node:net';
import type { Logger } from 'pino';
import { AppRegistry } from './apps/registry.ts';
import { ApiKeyVerifier } from './auth/authenticate.ts';
import { SlidingWindowLimiter } from './auth/rate-limit.ts';
import { type Clock, systemClock } from './clock.ts';
import { type Config, LIMITS } from './config.ts';
import { ConsoleSessions } from './console/sessions.ts';
import { createEnvelope, createKms } from './crypto/envelope.ts';
import { countKmsCalls } from './crypto/kms/count-calls.ts';
import { type OpenOptions, openDatabase } from './db/database.ts';
import type { AppDeps } from './deps.ts';
import { createHttpServer } from './http/server.ts';
import { IdempotencyService } from './idempotency/service.ts';
import { idempotencySettings } from './idempotency/settings.ts';
import { createLogger } from './logger.ts';
import { createMetrics } from './metrics.ts';
import { GrantCache } from './oauth/grant-cache.ts';
import { IssuerPolicy } from './oauth/issuer.ts';
import { createRefreshFlights } from './oauth/refresh-flights.ts';
import { OAuthStateRepository } from './oauth/state-repository.ts';
import { CallLog } from './observe/call-log.ts';
import { startCallLogPurge } from './observe/call-log-purge.ts';
import { startTracing } from './observe/tracing.ts';
import { ToolSearch } from './search/service.ts';
import { createSignin } from './signin/signin.ts';

export interface App {
  deps: AppDeps;
  server: Server;
  /**
   * Listens on config.host:config.port (port 0 picks a free one), or on a socket already bound to
   * it (main.ts binds first, so a port in use fails before the database opens); answers the URL.
   */
  listen(bound?: NetServer): Promise<string>;
  /** Stops accepting, lets in-flight requests finish (up to the grace time), closes the database. */
  close(): Promise<void>;
}

export interface AppOptions {
  clock?: Clock;
  logger?: Logger;
  /** Hears the slow steps of opening the database (creating it, migrating), e.g. to print them. */
  onProgress?: OpenOptions['onProgress'];
}

/** Builds the whole service from a parsed config: database (migrated), dependencies, HTTP server. */
export async function createApp(config: Config, options: AppOptions = {}): Promise<App> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const clock = options.clock ?? systemClock;
  // The KMS first: a bad key setting must stop start-up before anything is opened.
  const metrics = createMetrics();
  const envelope = createEnvelope({ kms: countKmsCalls(await createKms(config.kms), metrics) });
  const tracing = await startTracing(config.otlpEndpoint, logger);
  const db = await openDatabase(config.databaseUrl, {
    onProgress: options.onProgress,
    tracer: tracing?.tracer,
  });
  const apps = new AppRegistry(db.prisma, envelope, clock, logger);
  const deps: AppDeps = {
    config,
    db,
    clock,
    logger,
    keys: new ApiKeyVerifier(db.prisma, clock, logger, config.adminKey),
    envelope,
    apps,
    search: new ToolSearch(db.prisma, apps, clock, logger),
    limiter: new SlidingWindowLimiter(config.rateLimitPerKeyPerMin),
    metrics,
    tracing,
    callLog: new CallLog(
      db,
      {
        enabled: config.callLogDays > 0,
        flushMs: LIMITS.callLogFlushMs,
        batch: LIMITS.callLogBatch,
        maxBuffered: LIMITS.callLogBuffered,
      },
      metrics.callLog,
      logger,
    ),
    idempotency: new IdempotencyService(db.prisma, clock, logger, idempotencySettings(config)),
    grants: new GrantCache(),
    refreshes: createRefreshFlights(),
    states: new OAuthStateRepository(db.prisma, logger),
    issuers: new IssuerPolicy(logger),
    consoleSessions: new ConsoleSessions(db.prisma, clock, config.adminKey),
    signin: createSignin({ config, prisma: db.prisma, envelope, clock, logger }),
  };
  metrics.searchTools(() => deps.search.toolsInMemory);
  deps.idempotency.startPurging();
  const callLogPurge = startCallLogPurge(db.prisma, config.callLogDays, clock, logger);
  const server = createHttpServer(deps, deps.metrics);
  let closing: Promise<void> | undefined;

  return {
    deps,
    server,
    listen: (bound) =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        const listening = () => {
          server.off('error', reject);
          const { port } = server.address() as AddressInfo;
          const host = config.host.includes(':') ? `[${config.host}]` : config.host;
          void deps.search.warm();
          resolve(`http://${host}:${port}`);
        };
        if (bound) server.listen(bound, listening);
        else server.listen(config.port, config.host, listening);
      }),
    close: () => {
      closing ??= (async () => {
        await new Promise<void>((resolve) => {
          const force = setTimeout(() => server.closeAllConnections(), LIMITS.shutdownGraceMs);
          // Keep-alive sockets hold close() open: drop each one as soon as its last answer is out.
          const sweep = setInterval(() => server.closeIdleConnections(), 50);
          force.unref();
          sweep.unref();
          server.close(() => {
            clearTimeout(force);
            clearInterval(sweep);
            resolve();
          });
        });
        // A refresh whose call already answered may still be waiting for its provider: its answer
        // (perhaps a rotated refresh token) must reach the database before the database closes.
        await deps.refreshes.settled();
        await deps.search.close();
        await deps.idempotency.close();
        await callLogPurge.stop();
        await deps.callLog.close();
        await deps.signin?.close();
        await db.close();
        await tracing?.shutdown();
      })();
      return closing;
    },
  };
}
