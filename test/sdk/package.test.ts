/**
 * The published package: build it, `npm pack` it, install the tarball into a fresh project (its
 * dependencies from npm's cache, offline), and use it there with plain `node` against a real
 * server — first without the optional tRPC peers, then with them — and type-check a consumer
 * with TypeScript under NodeNext and Bundler resolution, without @types/node.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Agent, provisionAgent, registerApp } from '../support/agent.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SDK = path.join(ROOT, 'sdk');
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/** The environment without npm's own `npm_*` variables (set when the tests run under `npm test`). */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!/^npm_/i.test(key)) env[key] = value;
  return { ...env, ...extra };
}

async function npm(args: string[], cwd: string): Promise<string> {
  const { stdout } = await run('npm', args, { cwd, env: cleanEnv(), maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

/**
 * `npm install` from npm's cache alone (what `npm install` at the top level left there); when the
 * cache lacks something (a fresh CI machine after `npm ci` keeps tarballs but not always the
 * package documents a range needs), from the registry, preferring the cache.
 */
async function install(packages: string[], cwd: string): Promise<void> {
  const flags = ['--no-audit', '--no-fund'];
  try {
    await npm(['install', ...packages, '--offline', ...flags], cwd);
  } catch (error) {
    if (!/ENOTCACHED/.test(String((error as { stderr?: string }).stderr ?? error))) throw error;
    console.info(`npm's cache lacks some of ${packages.join(' ')}: installing with --prefer-offline`);
    await npm(['install', ...packages, '--prefer-offline', ...flags], cwd);
  }
}

const BIN = path.join(ROOT, 'node_modules', '.bin');

/**
 * What a registry would get is right: publint (exports, files, fields) and "are the types wrong"
 * (every entry point's types resolve, under the esm-only profile: the package is ESM only, so
 * node10 and CommonJS-require resolutions are out of scope) find nothing in the tarball, and
 * `npm publish --dry-run` of it warns about nothing but the missing login, publicly.
 */
async function expectPublishReady(tarball: string): Promise<void> {
  const outcome = (args: string[]) =>
    run(args[0] as string, args.slice(1), { env: cleanEnv(), maxBuffer: 16 * 1024 * 1024 }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code?: number; stdout?: string; stderr?: string }) => ({
        code: error.code ?? -1,
        stdout: error.stdout ?? '',
        stderr: error.stderr ?? '',
      }),
    );
  const publint = await outcome([path.join(BIN, 'publint'), 'run', tarball, '--strict']);
  expect(publint, 'publint').toMatchObject({ code: 0, stdout: expect.stringContaining('All good!') });

  const attw = await outcome([path.join(BIN, 'attw'), tarball, '--profile', 'esm-only', '--format', 'json']);
  const report = JSON.parse(attw.stdout) as {
    analysis: { entrypoints: Record<string, unknown> };
    problems: Record<string, { resolutionKind?: string }[]>;
  };
  expect(Object.keys(report.analysis.entrypoints).sort()).toEqual(
    ['.', './ai', './anthropic', './langchain', './openai', './package.json', './trpc'].sort(),
  );
  const counted = Object.values(report.problems)
    .flat()
    .filter((problem) => !['node10', 'node16-cjs'].includes(problem.resolutionKind ?? ''));
  expect(counted, 'are the types wrong').toEqual([]);
  expect(attw.code, attw.stderr).toBe(0);

  const dryRun = await outcome(['npm', 'publish', tarball, '--dry-run']);
  expect(dryRun.code, dryRun.stderr).toBe(0);
  const warnings = dryRun.stderr
    .split('\n')
    .filter((line) => /^npm (warn|error)/i.test(line) && !/requires you to be logged in/.test(line));
  expect(warnings).toEqual([]);
  expect(dryRun.stderr).toContain('with tag latest and public access (dry-run)');
}

const CONSUMER_JS = `
import { Toolgate, ToolgateAdmin, isApiError, failureMessage } from '@toolgate/sdk';
const { BASE, KEY, CLIENT, ADMIN } = process.env;
const toolgate = new Toolgate({ baseUrl: BASE, apiKey: KEY, clientId: CLIENT });
const ok = await toolgate.execute('open:::getItem', { itemId: 'packed' });
const missing = await toolgate.execute('open:::nope', {});
const tools = await toolgate.listTools();
const admin = await new ToolgateAdmin({ baseUrl: BASE, adminKey: ADMIN }).listClients();
console.log(JSON.stringify({
  resolved: import.meta.resolve('@toolgate/sdk'),
  ok,
  missing: { error: missing.error, status: missing.status, isApiError: isApiError(missing, 'tool_not_found'), message: failureMessage(missing) },
  tools: tools.ok ? tools.tools.length : tools.error,
  clients: admin.ok ? admin.clients.length : admin.error,
}));
`;

const CONSUMER_TRPC_JS = `
import { createTrpcClient, contractError } from '@toolgate/sdk/trpc';
const { BASE, KEY, CLIENT } = process.env;
const trpc = createTrpcClient({ baseUrl: BASE, apiKey: KEY, clientId: CLIENT });
const answer = await trpc.proxy.mutate({ toolId: 'open:::getItem', parameters: { itemId: 'rpc' } });
const error = await trpc.proxy.mutate({ toolId: 'open:::nope', parameters: {} }).catch((e) => e);
console.log(JSON.stringify({ data: answer.data, contract: contractError(error) }));
`;

const CONSUMER_TS = `
import { Toolgate, type ExecuteResult, type ErrorBody } from '@toolgate/sdk';
import { contractError, createTrpcClient } from '@toolgate/sdk/trpc';

const toolgate = new Toolgate({ baseUrl: 'http://127.0.0.1:3000', apiKey: 'k', clientId: 'c' });
const result: ExecuteResult<{ id: string }> = await toolgate.execute('open:::getItem', { itemId: '1' });
if (result.ok) {
  const id: string = result.data.id;
  console.log(id, result.meta.duration_ms);
} else if (result.error === 'upstream_error') {
  const status: number = result.body.upstream_status;
  console.log(status);
} else if (result.error === 'network_error') {
  console.log(result.timedOut);
}
// @ts-expect-error: not a code of the contract nor of the SDK
if (!result.ok && result.error === 'no_such_code') console.log('never');
if (!result.ok && result.error === 'rbac_denied') {
  // @ts-expect-error: rbac_denied carries scope, not upstream_status
  console.log(result.body.upstream_status);
}
const body: ErrorBody<'auth_required'> = { ok: false, error: 'auth_required', message: 'm', auth_endpoint: '/initiateOAuth', app_id: 'a' };
console.log(body);

const trpc = createTrpcClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: 'k', clientId: 'c' });
const { tools } = await trpc.tools.list.query({});
const toolId: string | undefined = tools[0]?.toolId;
// @ts-expect-error: toolId must be a string
await trpc.proxy.mutate({ toolId: 1, parameters: {} });
const contract = contractError(new Error('x'));
if (contract?.error === 'rbac_denied') console.log(contract.scope, toolId);
`;

// Not per database backend: the package is the subject, the server only its counterpart.
describe('SDK: the packed package in a fresh project', () => {
  let server: TestServer;
  let upstream: Upstream;
  let agent: Agent;
  let work: string;
  beforeAll(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'toolgate-sdk-pack-'));
    upstream = await startUpstream();
    server = await startServer('pglite');
    await registerApp(server, 'open', {
      provider: 'toolgate.test',
      openapi: upstream.openapi,
      auth: { type: 'none' },
    });
    agent = await provisionAgent(server, ['tools:execute']);
  });
  afterAll(async () => {
    await server?.close();
    await upstream?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('builds, packs, installs offline and runs with plain node; types check for consumers', {
    timeout: 240_000,
  }, async () => {
    // npm pack runs the package's prepack script: a clean `tsc -p tsconfig.build.json`.
    const packed = await npm(['pack', '--silent', '--pack-destination', work], SDK);
    const tarball = path.join(work, packed.trim().split('\n').at(-1) ?? '');
    expect(path.basename(tarball)).toBe('toolgate-sdk-0.1.0.tgz');
    const { stdout: listing } = await run('tar', ['-tzf', tarball]);
    const files = listing.trim().split('\n').sort();
    expect(files).toContain('package/dist/sdk/src/index.js');
    expect(files).toContain('package/dist/sdk/src/index.d.ts');
    expect(files).toContain('package/dist/shared/errors.js');
    expect(files).toContain('package/README.md');
    expect(files.filter((f) => /\.ts$/.test(f) && !f.endsWith('.d.ts'))).toEqual([]);
    expect(files.filter((f) => f.includes('/server/') || f.includes('/test/'))).toEqual([]);
    expect(files).toEqual(expect.arrayContaining(['package/CHANGELOG.md', 'package/LICENSE']));
    await expectPublishReady(tarball);

    const project = path.join(work, 'consumer');
    await run('mkdir', ['-p', project]);
    await writeFile(
      path.join(project, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
    );
    await install([tarball], project);
    const installed = (await readdir(path.join(project, 'node_modules'))).filter((n) => !n.startsWith('.'));
    expect(installed.sort()).toEqual(['@toolgate', 'ky', 'zod']);

    const env = cleanEnv({
      BASE: server.url,
      KEY: agent.apiKey,
      CLIENT: agent.clientId,
      ADMIN: server.adminKey,
    });
    await writeFile(path.join(project, 'main.mjs'), CONSUMER_JS);
    const { stdout } = await run(process.execPath, ['main.mjs'], { cwd: project, env });
    const out = JSON.parse(stdout);
    expect(out.resolved).toBe(`file://${project}/node_modules/@toolgate/sdk/dist/sdk/src/index.js`);
    expect(out.ok).toMatchObject({
      ok: true,
      data: { id: 'packed', title: 'An item' },
      meta: { tool_id: 'open:::getItem' },
    });
    expect(out.missing).toEqual({
      error: 'tool_not_found',
      status: 404,
      isApiError: true,
      message: expect.any(String),
    });
    expect(out.tools).toBeGreaterThan(5);
    expect(out.clients).toBeGreaterThanOrEqual(1);

    // The optional tRPC peers (and TypeScript, a peer of @trpc/client) for the ./trpc entry.
    await install(['@trpc/client@11.25.2', '@trpc/server@11.25.2', 'typescript@5.9.3'], project);
    await writeFile(path.join(project, 'trpc.mjs'), CONSUMER_TRPC_JS);
    const trpcRun = await run(process.execPath, ['trpc.mjs'], { cwd: project, env });
    expect(JSON.parse(trpcRun.stdout)).toEqual({
      data: { id: 'rpc', title: 'An item' },
      contract: { ok: false, error: 'tool_not_found', message: expect.any(String), tool_id: 'open:::nope' },
    });

    await writeFile(path.join(project, 'consumer.ts'), CONSUMER_TS);
    for (const [module, resolution] of [
      ['NodeNext', 'NodeNext'],
      ['ESNext', 'Bundler'],
    ]) {
      const config = {
        compilerOptions: {
          target: 'ES2022',
          module,
          moduleResolution: resolution,
          // ESNext.Disposable: @trpc/server's own declarations need it (not the SDK's).
          lib: ['ES2023', 'ESNext.Disposable', 'DOM'],
          types: [],
          strict: true,
          noEmit: true,
          skipLibCheck: false,
        },
        files: ['consumer.ts'],
      };
      await writeFile(path.join(project, 'tsconfig.json'), JSON.stringify(config));
      const checked = await run(process.execPath, [TSC, '-p', '.'], { cwd: project }).then(
        () => 'clean',
        (error: { stdout?: string }) => error.stdout ?? String(error),
      );
      expect(checked, `${module}/${resolution}`).toBe('clean');
    }
  });
});
