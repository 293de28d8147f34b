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

interface Entry {
  updatedAt: number;
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
  async search(text: string, admits: (appId: string) => boolean, limit: number): Promise<Hit[]> {
    const query = readQuery(text);
    const ids = await this.#ready(admits);
    if (query.terms.size === 0 && query.exact === null) return [];
    const segments: Segment[] = [];
    for (const appId of ids) {
      const segment = this.#entries.get(appId)?.segment;
      if (segment) segments.push(segment);
    }
    return rank(this.#vocabulary, segments, query, limit);
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
    for (let at = 0; at < appIds.length; at += LOAD_BATCH) {
      const rows = await this.prisma.app.findMany({
        where: { id: { in: appIds.slice(at, at + LOAD_BATCH) } },
        select: { id: true, search: true, updatedAt: true },
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
        this.#remember(row.id, { updatedAt: updatedAt.getTime(), segment });
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
