import type { Logger } from 'pino';
import { type PublicAuth, publicAuthSchema } from '../../shared/schemas/apps.ts';
import { type CompiledApp, openCatalog } from '../catalog/catalog.ts';
import { DocumentCompiler } from '../catalog/compiler.ts';
import type { Clock } from '../clock.ts';
import type { Envelope } from '../crypto/envelope.ts';
import type { PrismaClient } from '../db/generated/client.ts';
import { replaceToolRows, TOOL_ROWS_TIMEOUT_MS } from '../search/views.ts';
import { SingleFlight } from '../single-flight.ts';
import { writeAppTexts } from './app-texts.ts';
import { appSecretContext, serviceParameter } from './secrets.ts';

/** An app as the proxy needs it: compiled tools, effective base URL, auth and its sealed secret. */
export interface LoadedApp {
  appId: string;
  provider: string;
  baseUrl: string;
  /** An app from an MCP server: the server's URL, where every call goes (`baseUrl` is the same). */
  mcpUrl: string | null;
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

const appRow = {
  id: true,
  provider: true,
  baseUrl: true,
  mcpUrl: true,
  openapi: true,
  catalog: true,
  authConfig: true,
  authSecret: true,
  updatedAt: true,
} as const;

interface AppRow {
  id: string;
  provider: string;
  baseUrl: string | null;
  mcpUrl: string | null;
  openapi: string;
  catalog: string | null;
  authConfig: unknown;
  authSecret: Uint8Array | null;
  updatedAt: Date;
}

/**
 * Compiled apps, cached per process. The database stays the truth: an entry older than
 * REVALIDATE_MS costs one indexed read of `updated_at` (one read for all apps in `list`), and a
 * changed or deleted app is reloaded. Loading reads the catalog compiled at registration; only a
 * catalog of an older format is compiled again (on the compiler's worker thread) and stored back.
 */
export class AppRegistry {
  readonly #entries = new Map<string, Entry>();
  /** One load per app at a time, however many requests ask for it. */
  readonly #loads = new SingleFlight<string, LoadedApp | null>();
  /** Compiles documents off the event loop, for registrations and for catalogs of an older format. */
  readonly compiler = new DocumentCompiler();
  readonly #listeners: Array<(appId: string) => void> = [];

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

  /** Every registered app, in id order: one query for what changed, one for the rows to load. */
  async list(): Promise<LoadedApp[]> {
    const now = this.clock.now();
    const rows = await this.prisma.app.findMany({
      select: { id: true, updatedAt: true },
      orderBy: { id: 'asc' },
    });
    const stale: string[] = [];
    for (const row of rows) {
      const cached = this.#entries.get(row.id)?.app;
      if (cached && cached.updatedAt.getTime() === row.updatedAt.getTime()) {
        (this.#entries.get(row.id) as Entry).checkedAt = now;
      } else if (!this.#loads.has(row.id)) {
        stale.push(row.id);
      }
    }
    const listed = new Set(rows.map((row) => row.id));
    for (const id of this.#entries.keys()) if (!listed.has(id)) this.#entries.delete(id);
    if (stale.length > 0) {
      const full = await this.prisma.app.findMany({ where: { id: { in: stale } }, select: appRow });
      await Promise.all(
        full.map((row) => this.#loads.run(row.id, () => this.#remember(row.id, this.#build(row), now))),
      );
    }
    // Joins a load still in flight (started by another request); otherwise answers the cache.
    const apps = await Promise.all(
      rows.map((row) => this.#loads.run(row.id, async () => this.#entries.get(row.id)?.app ?? null)),
    );
    return apps.filter((app): app is LoadedApp => app !== null);
  }

  /** Forget an app at once in this process (after a change made here). */
  invalidate(appId: string): void {
    this.#entries.delete(appId);
    for (const listener of this.#listeners) listener(appId);
  }

  /** Called with the app's id whenever `invalidate` is (the search index follows the registry). */
  onInvalidate(listener: (appId: string) => void): void {
    this.#listeners.push(listener);
  }

  #load(appId: string, now: number): Promise<LoadedApp | null> {
    return this.#loads.run(appId, () =>
      this.#remember(
        appId,
        this.prisma.app
          .findUnique({ where: { id: appId }, select: appRow })
          .then((row) => (row ? this.#build(row) : null)),
        now,
      ),
    );
  }

  async #remember(appId: string, loading: Promise<LoadedApp | null>, now: number): Promise<LoadedApp | null> {
    const app = await loading;
    this.#entries.set(appId, { app, checkedAt: now });
    return app;
  }

  /** A row → a loaded app; null (logged) when it can't be served, which never stops the server. */
  async #build(row: AppRow): Promise<LoadedApp | null> {
    const auth = publicAuthSchema.safeParse(row.authConfig);
    if (!auth.success) {
      this.logger.error({ appId: row.id }, 'stored app has an unreadable auth block');
      return null;
    }
    const compiled =
      (row.catalog !== null ? openCatalog(row.catalog) : null) ?? (await this.#recompile(row, auth.data));
    if (!compiled) return null;
    const baseUrl = row.mcpUrl ?? row.baseUrl ?? compiled.serverUrl;
    if (!baseUrl) return null;
    const sealed = row.authSecret ? Buffer.from(row.authSecret) : null;
    let opened: Promise<string | null> | undefined;
    return {
      appId: row.id,
      provider: row.provider,
      baseUrl,
      mcpUrl: row.mcpUrl,
      auth: auth.data,
      compiled,
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

  /** A catalog of an older format (or none): compiled again from the stored document and stored back. */
  async #recompile(row: AppRow, auth: PublicAuth): Promise<CompiledApp | null> {
    const service = serviceParameter(auth);
    const outcome = await this.compiler.compile(row.openapi, {
      ...(service ? { service } : {}),
      app: { appId: row.id, provider: row.provider },
      ...(row.mcpUrl !== null ? { mcp: true } : {}),
    });
    if (!outcome.ok) {
      this.logger.error(
        { appId: row.id, issues: outcome.error.slice(0, 5) },
        'stored app no longer compiles',
      );
      return null;
    }
    // Only the version that was compiled: a replacement stored meanwhile keeps its own catalog
    // (and its tools' rows: they are replaced only when this version's catalog is).
    await this.prisma.$transaction(
      async (tx) => {
        const { count } = await tx.app.updateMany({
          where: { id: row.id, updatedAt: row.updatedAt },
          // The version stays the same (Prisma would stamp a new updated_at): other servers keep their cache.
          data: { updatedAt: row.updatedAt },
        });
        if (count === 0) return;
        await writeAppTexts(tx, row.id, {
          catalog: outcome.value.catalogText,
          search: outcome.value.searchText,
        });
        await replaceToolRows(tx, row.id, outcome.value.toolViews);
      },
      { timeout: TOOL_ROWS_TIMEOUT_MS },
    );
    return openCatalog(outcome.value.catalogText);
  }
}
