/**
 * Tool search (docs/reference.md "Tool search"): the apps' search segments in memory, kept in
 * step with the database, and one `search()` every surface uses (`GET /tools?q=`, MCP search
 * mode). Segments are read, not catalogs: a server holding the whole APIs.guru collection keeps
 * its words in memory (tens of megabytes) and loads a catalog only for the tools it answers.
 *
 * The database stays the truth, as for the app registry: the list of apps and their versions is
 * read again once REVALIDATE_MS has passed (one query of ids and times), a change made in this
 * process is seen at once (`AppRegistry.onInvalidate`), and a changed app's segment is read again.
 */
import type { Logger } from 'pino';
import type { AppRegistry } from '../apps/registry.ts';
import { unpackText } from '../catalog/packing.ts';
import type { Clock } from '../clock.ts';
import type { PrismaClient } from '../db/generated/client.ts';
import { SingleFlight } from '../single-flight.ts';
import { readQuery } from './analyze.ts';
import { type Hit, rank, SharedVocabulary } from './rank.ts';
import { openSegment, type Segment } from './segment.ts';

export type { Hit };

/** How stale the list of apps may be: a change made through another server is seen within this time. */
const REVALIDATE_MS = 1_000;
/** Segments read per query when many are missing (a cold server searching the whole collection). */
const LOAD_BATCH = 100;

/** A ranked tool, and whether it acts for the end user (its app is an oauth2 app). */
export type Found = Hit & { requiresUserAuth: boolean };

interface Entry {
  updatedAt: number;
  /** The app's auth is oauth2: its tools act for the end user. */
  userAuth: boolean;
  /** null: the app has no searchable segment (it cannot be served). */
  segment: Segment | null;
}

export class ToolSearch {
  readonly #vocabulary = new SharedVocabulary();
  readonly #entries = new Map<string, Entry>();
  readonly #loads = new SingleFlight<string, void>();
  readonly #listing = new SingleFlight<'apps', Map<string, number>>();
  /** Every app id with its version, as last read, and when. */
  #versions: { at: number; apps: Map<string, number> } | undefined;
  /** Reading every segment ahead of the first search (warm), once. */
  #warming: Promise<void> | undefined;
  #closed = false;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly registry: AppRegistry,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {
    registry.onInvalidate(() => {
      this.#versions = undefined;
    });
  }

  /**
   * The best `limit` tools for `text` among the apps `admits` lets through (the key's apps,
   * narrowed by `appId`/`apps`), best first; ties in catalog order (apps by id, tools in
   * document order).
   */
  async search(text: string, admits: (appId: string) => boolean, limit: number): Promise<Found[]> {
    const query = readQuery(text);
    const ids = await this.#ready(admits);
    if (query.terms.size === 0 && query.exact === null) return [];
    const segments: Segment[] = [];
    for (const appId of ids) {
      const segment = this.#entries.get(appId)?.segment;
      if (segment) segments.push(segment);
    }
    return rank(this.#vocabulary, segments, query, limit).map((hit) => ({
      ...hit,
      requiresUserAuth: this.#entries.get(hit.appId)?.userAuth ?? false,
    }));
  }

  /**
   * Reads every app's segment now instead of at the first search: a server holding the APIs.guru
   * collection would make its first search wait for all 2,698 of them (4.9 s, BENCHMARKS.md).
   * Started when the server listens; a batch at a time, so requests are served meanwhile. A
   * failure is only logged: searches read the segments they need themselves.
   */
  warm(): Promise<void> {
    this.#warming ??= this.#ready(() => true).then(
      () => undefined,
      (error: unknown) => {
        if (!this.#closed)
          this.logger.warn(
            { err: error },
            'search: reading the apps’ segments ahead of the first search failed; searches read them as needed',
          );
      },
    );
    return this.#warming;
  }

  /** Stops reading segments ahead (the database is about to close) and waits for the batch in flight. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#warming;
  }

  /** How many tools the segments in this process's memory hold (the `toolgate_search_tools` gauge). */
  get toolsInMemory(): number {
    let total = 0;
    for (const entry of this.#entries.values()) total += entry.segment?.names.length ?? 0;
    return total;
  }

  /** How many tools the apps `admits` lets through hold (from their segments: no catalog is loaded). */
  async count(admits: (appId: string) => boolean): Promise<number> {
    const ids = await this.#ready(admits);
    let total = 0;
    for (const appId of ids) total += this.#entries.get(appId)?.segment?.names.length ?? 0;
    return total;
  }

  /** The admitted app ids in catalog order, their current segments in memory. */
  async #ready(admits: (appId: string) => boolean): Promise<string[]> {
    const versions = await this.#currentVersions();
    const ids = [...versions.keys()].filter(admits).sort();
    const stale = ids.filter((appId) => this.#entries.get(appId)?.updatedAt !== versions.get(appId));
    if (stale.length > 0) await this.#loads.run(stale.join('\n'), () => this.#load(stale));
    return ids;
  }

  async #currentVersions(): Promise<Map<string, number>> {
    const now = this.clock.now();
    if (this.#versions && now - this.#versions.at < REVALIDATE_MS) return this.#versions.apps;
    const apps = await this.#listing.run('apps', async () => {
      const rows = await this.prisma.app.findMany({ select: { id: true, updatedAt: true } });
      return new Map(rows.map((row) => [row.id, row.updatedAt.getTime()]));
    });
    this.#versions = { at: now, apps };
    // Apps deleted since: out of the vocabulary's counts and out of memory.
    for (const [appId, entry] of this.#entries) {
      if (apps.has(appId)) continue;
      if (entry.segment) this.#vocabulary.count(entry.segment, -1);
      this.#entries.delete(appId);
    }
    return apps;
  }

  /** Reads the segments of `appIds`, a batch of rows at a time (the event loop turns between batches). */
  async #load(appIds: string[]): Promise<void> {
    for (let at = 0; at < appIds.length && !this.#closed; at += LOAD_BATCH) {
      const rows = await this.prisma.app.findMany({
        where: { id: { in: appIds.slice(at, at + LOAD_BATCH) } },
        select: { id: true, search: true, updatedAt: true, authType: true },
      });
      for (const row of rows) {
        let text = row.search;
        let updatedAt = row.updatedAt;
        let segment = text ? openSegment(row.id, unpackText(text), this.#vocabulary) : null;
        if (!segment) {
          // No segment of this format yet (an app stored by an older version): loading the app
          // recompiles its catalog, segment included, on the compile worker, and stores both.
          await this.registry.get(row.id);
          const again = await this.prisma.app.findUnique({
            where: { id: row.id },
            select: { search: true, updatedAt: true },
          });
          text = again?.search ?? null;
          updatedAt = again?.updatedAt ?? updatedAt;
          segment = text ? openSegment(row.id, unpackText(text), this.#vocabulary) : null;
          if (!segment)
            this.logger.warn({ appId: row.id }, 'app has no search segment: its tools are not searchable');
        }
        this.#remember(row.id, {
          updatedAt: updatedAt.getTime(),
          userAuth: row.authType === 'oauth2',
          segment,
        });
      }
    }
  }

  #remember(appId: string, entry: Entry): void {
    const previous = this.#entries.get(appId);
    if (previous?.segment) this.#vocabulary.count(previous.segment, -1);
    if (entry.segment) this.#vocabulary.count(entry.segment, 1);
    this.#entries.set(appId, entry);
  }
}
