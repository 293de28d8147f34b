import type { Logger } from 'pino';
import type { PublicAuth } from '../../shared/schemas/apps.ts';
import { type CompiledApp, compileApp } from '../catalog/catalog.ts';
import type { Clock } from '../clock.ts';
import type { Envelope } from '../crypto/envelope.ts';
import type { PrismaClient } from '../db/generated/client.ts';
import { appSecretContext, storedDocument } from './apps.ts';

/** An app as the proxy needs it: compiled tools, effective base URL, auth and its sealed secret. */
export interface LoadedApp {
  appId: string;
  provider: string;
  baseUrl: string;
  auth: PublicAuth;
  compiled: CompiledApp;
  updatedAt: Date;
  /** The plaintext secret, opened once per process and version of the app. */
  secret(): Promise<string | null>;
}

interface Entry {
  app: LoadedApp | null;
  checkedAt: number;
}

/** How stale a cached app may be: a change made through another server is seen within this time. */
const REVALIDATE_MS = 1_000;

/**
 * Compiled apps, cached per process. The database stays the truth: an entry older than
 * REVALIDATE_MS costs one indexed read of `updated_at`, and a changed or deleted app is reloaded.
 */
export class AppRegistry {
  readonly #entries = new Map<string, Entry>();
  readonly #loading = new Map<string, Promise<LoadedApp | null>>();

  constructor(
    private readonly prisma: PrismaClient,
    private readonly envelope: Envelope,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  async get(appId: string): Promise<LoadedApp | null> {
    const now = this.clock.now();
    const entry = this.#entries.get(appId);
    if (entry && now - entry.checkedAt < REVALIDATE_MS) return entry.app;
    if (entry?.app) {
      const row = await this.prisma.app.findUnique({ where: { id: appId }, select: { updatedAt: true } });
      if (row && row.updatedAt.getTime() === entry.app.updatedAt.getTime()) {
        entry.checkedAt = now;
        return entry.app;
      }
    }
    return this.#load(appId, now);
  }

  /** Every registered app, in id order. */
  async list(): Promise<LoadedApp[]> {
    const rows = await this.prisma.app.findMany({ select: { id: true }, orderBy: { id: 'asc' } });
    const apps = await Promise.all(rows.map((row) => this.get(row.id)));
    return apps.filter((app): app is LoadedApp => app !== null);
  }

  /** Forget an app at once in this process (after a change made here). */
  invalidate(appId: string): void {
    this.#entries.delete(appId);
  }

  #load(appId: string, now: number): Promise<LoadedApp | null> {
    const running = this.#loading.get(appId);
    if (running) return running;
    const promise = this.#read(appId)
      .then((app) => {
        this.#entries.set(appId, { app, checkedAt: now });
        return app;
      })
      .finally(() => this.#loading.delete(appId));
    this.#loading.set(appId, promise);
    return promise;
  }

  async #read(appId: string): Promise<LoadedApp | null> {
    const row = await this.prisma.app.findUnique({
      where: { id: appId },
      select: {
        id: true,
        provider: true,
        baseUrl: true,
        openapi: true,
        authConfig: true,
        authSecret: true,
        updatedAt: true,
      },
    });
    if (!row) return null;
    const compiled = await compileApp(storedDocument(row.openapi));
    if (!compiled.ok) {
      // Stored documents were valid when registered; a failure here means the catalog changed.
      this.logger.error({ appId, issues: compiled.issues.slice(0, 5) }, 'stored app no longer compiles');
      return null;
    }
    const baseUrl = row.baseUrl ?? compiled.app.serverUrl;
    if (!baseUrl) return null;
    const sealed = row.authSecret ? Buffer.from(row.authSecret) : null;
    let opened: Promise<string | null> | undefined;
    return {
      appId: row.id,
      provider: row.provider,
      baseUrl,
      auth: row.authConfig as PublicAuth,
      compiled: compiled.app,
      updatedAt: row.updatedAt,
      secret: () => {
        if (!sealed) return Promise.resolve(null);
        opened ??= this.envelope.openString(sealed, appSecretContext(row.id)).catch((error: unknown) => {
          opened = undefined; // a KMS hiccup must not stick
          throw error;
        });
        return opened;
      },
    };
  }
}
