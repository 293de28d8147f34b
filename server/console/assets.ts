import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The console's built files (scripts/build.mjs builds server/console/app into dist/console at
 * install): the page, and the assets it loads, each named by a hash of its content. Read once, on
 * the first request, into memory (tens of kilobytes); only names found in the folder are ever
 * served, never a path taken from a request.
 *
 * Found relative to this module: `../../dist/console/` is the repository's dist/console from
 * server/console/ (sources) and from dist/server/ (the bundle) alike.
 */

const BUILT = fileURLToPath(new URL('../../dist/console/', import.meta.url));

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

export interface ConsoleFiles {
  page: Buffer;
  /** A strong validator of the page: it is revalidated on every load (Cache-Control: no-cache). */
  pageEtag: string;
  assets: Map<string, { body: Buffer; type: string }>;
}

let loading: Promise<ConsoleFiles | null> | undefined;

/** The built console, or null when it has not been built (npm run build builds it). */
export function consoleFiles(): Promise<ConsoleFiles | null> {
  loading ??= load().catch(() => {
    loading = undefined; // built later (npm run build): the next request finds it
    return null;
  });
  return loading;
}

async function load(): Promise<ConsoleFiles> {
  const page = await readFile(path.join(BUILT, 'index.html'));
  const assets = new Map<string, { body: Buffer; type: string }>();
  for (const name of await readdir(path.join(BUILT, 'assets'))) {
    const type = TYPES[path.extname(name)];
    if (type) assets.set(name, { body: await readFile(path.join(BUILT, 'assets', name)), type });
  }
  const pageEtag = `"${createHash('sha256').update(page).digest('base64url').slice(0, 27)}"`;
  return { page, pageEtag, assets };
}
