/**
 * npm run corpus — registers real OpenAPI documents against a real toolgate and reports what
 * becomes tools (issue 9; BENCHMARKS.md "Real documents").
 *
 * Fetches the corpus from the npm registry into a cache outside the repository (default
 * ~/.cache/toolgate-corpus), starts the server as its own process (`npm start`'s entry, PGlite in
 * memory) with an echo upstream, registers every document, runs one tool of each accepted app, and
 * prints: documents accepted / total, operations → tools / total, skipped operations by reason,
 * registration time (p50, p95, max), /healthz latency while documents register (and while the
 * largest ones do), the server's RSS.
 *
 *   npm run corpus                      every document (~2,700; about half an hour here)
 *   npm run corpus -- --limit 300       300 of the APIs.guru collection, spread evenly, plus the
 *                                       named APIs (GitHub, Stripe, Slack, Kubernetes, Twilio, Jira,
 *                                       Asana, Notion, OpenAI, Box, Discourse, Netlify) and the
 *                                       @readme/oas-examples documents
 *   npm run corpus -- --limit 0         only the named APIs and the @readme/oas-examples documents
 *                                       (a few minutes: GitHub, Kubernetes and Stripe among them)
 *   npm run corpus -- --json out.json   also write every document's outcome
 *   npm run corpus -- --cache <dir>     another cache folder
 */
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { type EchoUpstream, startEchoUpstream } from '../test/support/echo-upstream.ts';
import { type CorpusDocument, fetchPackages, listDocuments } from './corpus/documents.ts';
import { memoryOf, provisionAgent, startServer } from './corpus/server.ts';
import { ms, pct, percentile, reasonKind } from './corpus/stats.ts';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
/** The documents measured as "the largest": this many by size, plus every named API. */
const LARGEST = 10;

interface Outcome {
  document: CorpusDocument;
  status: number;
  ms: number;
  /** When the registration was sent and answered (performance.now()). */
  from: number;
  to: number;
  operations: number;
  tools: number;
  skipped: { method: string; path: string; reason: string }[];
  issues?: { path: string; message: string }[];
  /** One tool of the app run through /proxyV2: its status (0: none without required parameters). */
  ran?: number;
  ranTool?: string;
}

const log = (line: string) => process.stderr.write(`${line}\n`);

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      limit: { type: 'string' },
      cache: { type: 'string', default: path.join(homedir(), '.cache', 'toolgate-corpus') },
      json: { type: 'string' },
    },
  });
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (limit !== undefined && !(Number.isInteger(limit) && limit >= 0))
    throw new Error('--limit must be a whole number, 0 or more');
  const cache = path.resolve(values.cache as string);

  await fetchPackages(cache, log);
  const documents = await listDocuments(cache, limit);
  log(`${documents.length} documents; starting toolgate and the echo upstream…`);

  const upstream = await startEchoUpstream();
  const adminKey = `corpus-${randomBytes(24).toString('hex')}`;
  const server = await startServer(adminKey);
  const probe = startProbe(server.url);
  const outcomes: Outcome[] = [];
  const rss: number[] = [];
  try {
    const agent = await provisionAgent(server.url, adminKey);
    for (const [index, document] of documents.entries()) {
      let outcome: Outcome;
      try {
        outcome = await register(server.url, adminKey, document, upstream);
        if (outcome.status === 200) await runOneTool(server.url, agent, outcome, upstream);
      } catch (error) {
        // Recorded, not fatal: the report says which document broke what.
        const at = performance.now();
        outcome = { document, status: 0, ms: 0, from: at, to: at, operations: 0, tools: 0, skipped: [] };
        outcome.issues = [
          { path: '', message: `no answer: ${error instanceof Error ? error.message : String(error)}` },
        ];
      }
      outcomes.push(outcome);
      rss.push((await memoryOf(server.child)).rss);
      if ((index + 1) % 100 === 0) log(`  ${index + 1} / ${documents.length}`);
    }
  } finally {
    probe.stop();
    server.child.kill('SIGTERM');
    await upstream.close();
  }

  report(outcomes, probe.samples, rss);
  if (values.json) {
    await writeFile(
      values.json,
      JSON.stringify(
        outcomes.map(({ document, ...rest }) => ({
          source: document.source,
          bytes: document.bytes,
          named: document.named,
          ...rest,
        })),
        null,
        1,
      ),
    );
    log(`wrote ${values.json}`);
  }
}

/** Back-to-back /healthz probes for the whole run, each with its start time and latency. */
function startProbe(url: string): { samples: { at: number; ms: number }[]; stop(): void } {
  const samples: { at: number; ms: number }[] = [];
  let running = true;
  void (async () => {
    while (running) {
      const at = performance.now();
      try {
        await (await fetch(`${url}/healthz`)).text();
        samples.push({ at, ms: performance.now() - at });
      } catch {
        if (running) samples.push({ at, ms: Number.POSITIVE_INFINITY });
      }
    }
  })();
  return { samples, stop: () => (running = false) };
}

function countOperations(text: string): number {
  try {
    const document = JSON.parse(text) as { paths?: Record<string, Record<string, unknown>> };
    let count = 0;
    for (const item of Object.values(document.paths ?? {})) {
      if (item && typeof item === 'object') count += HTTP_METHODS.filter((method) => method in item).length;
    }
    return count;
  } catch {
    return 0;
  }
}

async function register(
  url: string,
  adminKey: string,
  document: CorpusDocument,
  upstream: EchoUpstream,
): Promise<Outcome> {
  const text = await readFile(document.file, 'utf8');
  // Sent as a user sends a JSON document: the object itself, not its text.
  const body = `{"provider":"corpus.api","baseUrl":${JSON.stringify(upstream.url)},"auth":{"type":"none"},"openapi":${text}}`;
  const started = performance.now();
  const reply = await fetch(`${url}/admin/apps/${document.id}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
    body,
  });
  const answer = (await reply.json()) as {
    tools: string[];
    skipped: Outcome['skipped'];
    issues?: { path: string; message: string }[];
  };
  const to = performance.now();
  const elapsed = to - started;
  const operations = countOperations(text);
  if (reply.status !== 200) {
    return {
      document,
      status: reply.status,
      ms: elapsed,
      from: started,
      to,
      operations,
      tools: 0,
      skipped: [],
      issues: answer.issues?.slice(0, 3),
    };
  }
  return {
    document,
    status: 200,
    ms: elapsed,
    from: started,
    to,
    operations: answer.tools.length + answer.skipped.length,
    tools: answer.tools.length,
    skipped: answer.skipped,
  };
}

/**
 * Runs the app's first tool that needs no parameter (most APIs have a list operation) through
 * /proxyV2, looking among its first 100 tools (Microsoft Graph has 22,000).
 */
async function runOneTool(
  url: string,
  agent: { apiKey: string; clientId: string },
  outcome: Outcome,
  upstream: EchoUpstream,
): Promise<void> {
  const headers = { authorization: `Bearer ${agent.apiKey}`, 'x-service-client-id': agent.clientId };
  const listed = (await (
    await fetch(`${url}/tools?appId=${outcome.document.id}&limit=100`, { headers })
  ).json()) as {
    tools: { toolId: string; parameters: { required?: string[] } }[];
  };
  const tool = listed.tools.find((candidate) => (candidate.parameters.required ?? []).length === 0);
  if (!tool) {
    outcome.ran = 0;
    return;
  }
  const before = upstream.requests.length;
  const reply = await fetch(`${url}/proxyV2`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', 'x-service-user-id': 'corpus-user' },
    body: JSON.stringify({ toolId: tool.toolId, parameters: {} }),
  });
  await reply.text();
  outcome.ran = reply.status === 200 && upstream.requests.length === before + 1 ? 200 : reply.status;
  outcome.ranTool = tool.toolId;
}

function report(outcomes: Outcome[], samples: { at: number; ms: number }[], rss: number[]): void {
  const accepted = outcomes.filter((outcome) => outcome.status === 200);
  const operations = outcomes.reduce((sum, outcome) => sum + outcome.operations, 0);
  const tools = outcomes.reduce((sum, outcome) => sum + outcome.tools, 0);
  const reasons = new Map<string, number>();
  for (const outcome of accepted) {
    for (const skipped of outcome.skipped)
      reasons.set(reasonKind(skipped.reason), (reasons.get(reasonKind(skipped.reason)) ?? 0) + 1);
  }
  const times = outcomes.map((outcome) => outcome.ms);
  const ran = accepted.filter((outcome) => outcome.ran !== 0);
  const lines = [
    '',
    `documents accepted     ${accepted.length} / ${outcomes.length} (${pct(accepted.length, outcomes.length)})`,
    `operations → tools     ${tools} / ${operations} (${pct(tools, operations)})`,
    `one tool run per app   ${ran.filter((outcome) => outcome.ran === 200).length} / ${ran.length} answered 200 through the echo upstream`,
    `registration time      p50 ${ms(percentile(times, 50))}, p95 ${ms(percentile(times, 95))}, max ${ms(Math.max(...times))}`,
  ];

  // /healthz while any registration ran, and while the largest ones did.
  const probeLatencies = samples.map((sample) => sample.ms).filter(Number.isFinite);
  const largest = [...outcomes]
    .sort((a, b) => b.document.bytes - a.document.bytes)
    .slice(0, LARGEST)
    .concat(outcomes.filter((outcome) => outcome.document.named));
  const duringLargest = samples
    .filter((sample) => largest.some((outcome) => sample.at >= outcome.from && sample.at <= outcome.to))
    .map((sample) => sample.ms);
  lines.push(
    `/healthz (whole run)   ${probeLatencies.length} probes: p50 ${ms(percentile(probeLatencies, 50))}, p99 ${ms(percentile(probeLatencies, 99))}, max ${ms(Math.max(...probeLatencies))}`,
    `/healthz (largest)     ${duringLargest.length} probes while the named and ${LARGEST} largest registered: p50 ${ms(percentile(duringLargest, 50))}, p99 ${ms(percentile(duringLargest, 99))}, max ${ms(Math.max(0, ...duringLargest))}`,
  );
  lines.push(
    `server RSS             max ${(Math.max(...rss) / 2 ** 20).toFixed(0)} MiB, at the end ${((rss.at(-1) ?? 0) / 2 ** 20).toFixed(0)} MiB`,
  );

  lines.push('', 'skipped operations by reason:');
  for (const [reason, count] of [...reasons].sort((a, b) => b[1] - a[1]).slice(0, 25))
    lines.push(`  ${String(count).padStart(6)}  ${reason}`);
  if (reasons.size === 0) lines.push('  none');

  lines.push('', 'refused documents:');
  for (const outcome of outcomes.filter((o) => o.status !== 200)) {
    lines.push(`  ${outcome.document.source} (${outcome.status}): ${outcome.issues?.[0]?.message ?? ''}`);
  }

  lines.push(
    '',
    'named and largest APIs:',
    '  API                          size     ops  tools  skipped  register  /healthz max  ran',
  );
  for (const outcome of [...new Set(largest)].sort((a, b) => b.document.bytes - a.document.bytes)) {
    lines.push(
      `  ${(outcome.document.named ?? `${path.basename(path.dirname(outcome.document.source))}/${path.basename(outcome.document.source)}`).slice(0, 28).padEnd(28)} ${`${(outcome.document.bytes / 2 ** 20).toFixed(1)} MB`.padStart(7)} ${String(outcome.operations).padStart(6)} ${String(outcome.tools).padStart(6)} ${String(outcome.skipped.length).padStart(8)} ${ms(outcome.ms).padStart(9)}  ${ms(maxDuring(samples, outcome)).padStart(12)}  ${outcome.ran ?? '-'}`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** The slowest /healthz probe that started while this document was registering. */
function maxDuring(samples: { at: number; ms: number }[], outcome: Outcome): number {
  const during = samples
    .filter((sample) => sample.at >= outcome.from && sample.at <= outcome.to)
    .map((sample) => sample.ms);
  return during.length > 0 ? Math.max(...during) : 0;
}

main().catch((error: unknown) => {
  log(`corpus: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
