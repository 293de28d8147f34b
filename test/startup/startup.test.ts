import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, hasPostgres } from '../support/db.ts';
import { startEchoUpstream } from '../support/echo-upstream.ts';

/**
 * The server process as `npm start` runs it (the bundle in dist/server, rebuilt here from the
 * sources): its lines at start, the first admin key, the port checked before the database, and
 * SIGTERM through npm.
 */

const ROOT = process.cwd();
const KEK = randomBytes(32).toString('base64');
const ADMIN_KEY_LINE = /^toolgate: admin key: (tg_key_[a-z0-9]{20}_[A-Za-z0-9_-]{43})$/;
/** How many migrations a new database gets (the folders of prisma/migrations). */
const MIGRATIONS = readdirSync(join(ROOT, 'prisma', 'migrations'), { withFileTypes: true }).filter((entry) =>
  entry.isDirectory(),
).length;
let dir: string;

beforeAll(() => {
  execFileSync(process.execPath, ['scripts/build.mjs', '--bundle-only'], { cwd: ROOT, stdio: 'pipe' });
  dir = mkdtempSync(join(tmpdir(), 'toolgate-startup-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  child: ChildProcess;
  exited: Promise<number | null>;
  err(): string;
  /** Resolves with the listening URL once the server says so; rejects if it exits first. */
  ready: Promise<string>;
}

function run(command: string, args: string[], env: Record<string, string>): Run {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOCAL_KEK: KEK, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stdout?.resume();
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const ready = new Promise<string>((resolve, reject) => {
    child.stderr?.on('data', (chunk) => {
      stderr += chunk;
      const m = /^toolgate: listening on (\S+);/m.exec(stderr);
      if (m) resolve(m[1] as string);
    });
    void exited.then((code) => reject(new Error(`exited ${code} before listening: ${stderr}`)));
  });
  ready.catch(() => {});
  return { child, exited, ready, err: () => stderr };
}

/** What `npm start` runs: scripts/start.sh, which execs node on the bundle. */
const server = (env: Record<string, string>) =>
  run('sh', ['scripts/start.sh'], { PORT: '0', LOG_LEVEL: 'warn', ...env });

/** The `node` start.sh runs: the first on PATH. */
function execPathOnPath(): string {
  return execFileSync('sh', ['-c', 'command -v node'], { encoding: 'utf8' }).trim();
}

async function stop(r: Run): Promise<number | null> {
  r.child.kill('SIGTERM');
  return r.exited;
}

function listen(port = 0): Promise<Server> {
  return new Promise((resolve, reject) => {
    const socket = createServer();
    socket.once('error', reject);
    socket.listen(port, '127.0.0.1', () => resolve(socket));
  });
}

const portOf = (s: Server) => (s.address() as { port: number }).port;

async function freePort(): Promise<number> {
  const probe = await listen();
  const port = portOf(probe);
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

// Each case starts real server processes, some on a new database: minutes on a busy machine.
describe('npm start', { timeout: 240_000 }, () => {
  it('prints a bad setting as one line and exits 1', async () => {
    const r = server({ PORT: 'x' });
    expect(await r.exited).toBe(1);
    expect(r.err()).toBe('toolgate: configuration error: PORT must be a whole number from 0 to 65535\n');
  });

  it('creates an admin key at first start, prints it once, and later starts print none', async () => {
    const db = `pglite:${join(dir, 'first')}`;
    const first = server({ DATABASE_URL: db });
    const url = await first.ready;
    const lines = first.err().trimEnd().split('\n');
    // A first start says what it waits for before it listens (issue 28: ~20 s of silence).
    expect(lines.slice(0, 3)).toEqual([
      `toolgate: creating the embedded database in ${join(dir, 'first')} (first start only, a few seconds)…`,
      `toolgate: migrating the database: ${MIGRATIONS} migrations to apply…`,
      `toolgate: listening on ${url}; API reference at ${url}/docs`,
    ]);
    const keyLines = lines.filter((line) => line.startsWith('toolgate: admin key: '));
    expect(keyLines).toHaveLength(1);
    const apiKey = ADMIN_KEY_LINE.exec(keyLines[0] as string)?.[1] as string;
    expect(apiKey).toBeDefined();

    const clients = await fetch(`${url}/admin/clients`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect([clients.status, await clients.json()]).toEqual([200, { clients: [] }]);
    const root = await fetch(`${url}/`, { redirect: 'manual' });
    expect([root.status, root.headers.get('location')]).toEqual([302, '/docs']);
    expect(await stop(first)).toBe(0);

    const second = server({ DATABASE_URL: db });
    const again = await second.ready;
    expect(second.err()).toBe(`toolgate: listening on ${again}; API reference at ${again}/docs\n`);
    const still = await fetch(`${again}/admin/clients`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(still.status).toBe(200);
    expect(await stop(second)).toBe(0);
  });

  it('prints no key when TOOLGATE_ADMIN_KEY is set, and warns about a wildcard PUBLIC_URL', async () => {
    const port = await freePort();
    const r = server({
      DATABASE_URL: `pglite:${join(dir, 'wildcard')}`,
      TOOLGATE_ADMIN_KEY: 'k'.repeat(32),
      HOST: '0.0.0.0',
      PORT: String(port),
    });
    await r.ready;
    expect(r.err()).toBe(
      `toolgate: creating the embedded database in ${join(dir, 'wildcard')} (first start only, a few seconds)…\n` +
        `toolgate: migrating the database: ${MIGRATIONS} migrations to apply…\n` +
        `toolgate: listening on http://0.0.0.0:${port}; API reference at http://0.0.0.0:${port}/docs\n` +
        `toolgate: warning: PUBLIC_URL is http://0.0.0.0:${port}, a wildcard address no browser can reach: OAuth providers would redirect users to http://0.0.0.0:${port}/handleOAuthCallback. Set PUBLIC_URL to the address users reach this server at.\n`,
    );
    expect(await stop(r)).toBe(0);
  });

  it("is node itself (start.sh execs it) with glibc's mmap threshold pinned and V8's compile cache in the temporary folder, unless the variables are the user's own", async () => {
    const environOf = (pid: number) => readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    const pinned = server({ DATABASE_URL: 'pglite:memory', TOOLGATE_ADMIN_KEY: 'k'.repeat(32) });
    await pinned.ready;
    const pid = pinned.child.pid as number;
    expect(realpathSync(`/proc/${pid}/exe`)).toBe(realpathSync(execPathOnPath()));
    expect(environOf(pid)).toContain('GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072');
    // Node 22.1+ reuses the bundle's compiled code from the last start (issue 23, item 13); never
    // written into the installation.
    expect(environOf(pid)).toContain('NODE_COMPILE_CACHE=/tmp/toolgate-compile-cache');
    expect(await stop(pinned)).toBe(0);

    const own = server({
      DATABASE_URL: 'pglite:memory',
      TOOLGATE_ADMIN_KEY: 'k'.repeat(32),
      GLIBC_TUNABLES: 'glibc.malloc.arena_max=2',
      NODE_COMPILE_CACHE: join(dir, 'compile-cache'),
    });
    await own.ready;
    expect(environOf(own.child.pid as number)).toContain('GLIBC_TUNABLES=glibc.malloc.arena_max=2');
    expect(environOf(own.child.pid as number)).toContain(`NODE_COMPILE_CACHE=${join(dir, 'compile-cache')}`);
    expect(await stop(own)).toBe(0);
  });

  // The bundle carries most packages inside it and loads some parts on first use (YAML, Swagger
  // 2.0, the compile worker, MCP, the OpenAPI generator): each must work from dist/ as from the sources.
  it('serves from the bundle what loads on first use: YAML, Swagger 2.0, the compile worker, MCP, /openapi.json', async () => {
    const upstream = await startEchoUpstream();
    const adminKey = 'a'.repeat(32);
    const r = server({ DATABASE_URL: 'pglite:memory', TOOLGATE_ADMIN_KEY: adminKey });
    try {
      const url = await r.ready;
      const admin = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' };
      const post = async (path: string, body: unknown, headers: Record<string, string>, method = 'POST') => {
        const response = await fetch(`${url}${path}`, { method, headers, body: JSON.stringify(body) });
        return [response.status, await response.json()] as [number, Record<string, unknown>];
      };
      const [, client] = await post('/admin/clients', { name: 'bundle' }, admin);
      const [, key] = await post(
        `/admin/clients/${client.clientId}/api-keys`,
        { name: 'k', scopes: ['tools:execute'] },
        admin,
      );
      const swaggerYaml = [
        'swagger: "2.0"',
        'info: { title: Legacy, version: "1" }',
        'basePath: /v1',
        'paths:',
        '  /items/{id}:',
        '    get:',
        '      operationId: getItem',
        '      parameters: [{ name: id, in: path, required: true, type: string }]',
        '      responses: { "200": { description: ok } }',
      ].join('\n');
      const app = {
        provider: 'example.legacy',
        baseUrl: upstream.url,
        openapi: swaggerYaml,
        auth: { type: 'none' },
      };
      expect(await post('/admin/apps/legacy', app, admin, 'PUT')).toEqual([
        200,
        { appId: 'legacy', tools: ['getItem'], skipped: [] },
      ]);

      const agent = {
        authorization: `Bearer ${key.apiKey}`,
        'x-service-client-id': String(client.clientId),
        'content-type': 'application/json',
      };
      const [status, answer] = await post(
        '/proxyV2',
        { toolId: 'legacy:::getItem', parameters: { id: '7' } },
        agent,
      );
      expect([status, answer]).toEqual([
        200,
        {
          ok: true,
          data: { received: true },
          meta: { tool_id: 'legacy:::getItem', duration_ms: expect.any(Number), provider: 'example.legacy' },
        },
      ]);
      expect(upstream.last().url).toBe('/items/7'); // baseUrl, not the document's basePath

      const mcp = await fetch(`${url}/mcp`, {
        method: 'POST',
        headers: {
          ...agent,
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/list',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/list',
          params: {
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
              'io.modelcontextprotocol/clientCapabilities': {},
            },
          },
        }),
      });
      expect(mcp.status).toBe(200);
      const listed = (await mcp.json()) as { result: { tools: { name: string }[] } };
      expect(listed.result.tools.map((tool) => tool.name)).toEqual(['legacy__getItem']);

      const spec = await fetch(`${url}/openapi.json`);
      expect(spec.status).toBe(200);
      expect(Object.keys(((await spec.json()) as { paths: object }).paths)).toContain('/proxyV2');
    } finally {
      await stop(r);
      await upstream.close();
    }
  });

  // Before, a connection made while the database opened was accepted and never answered.
  it('answers 503 while it starts, never leaving a connection unanswered', async () => {
    const port = await freePort();
    const r = server({ DATABASE_URL: `pglite:${join(dir, 'early')}`, PORT: String(port) });
    const answers: number[] = [];
    let ready = false;
    void r.ready.then(() => {
      ready = true;
    });
    while (!ready) {
      const status = await fetch(`http://127.0.0.1:${port}/readyz`, {
        signal: AbortSignal.timeout(60_000),
      }).then(
        (reply) => reply.status,
        (error: Error) => (error.name === 'TimeoutError' ? 'hung' : 'refused'),
      );
      if (typeof status === 'number') answers.push(status);
      else expect(status).toBe('refused');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(answers).toContain(503);
    expect(new Set(answers.filter((s) => s !== 503))).toEqual(new Set(answers.includes(200) ? [200] : []));
    const reply = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect([reply.status, await reply.json()]).toEqual([200, { ok: true }]);
    expect(await stop(r)).toBe(0);
  });

  it('refuses a port in use before it opens the database', async () => {
    const taken = await listen();
    try {
      const folder = join(dir, 'never-opened');
      const r = server({ DATABASE_URL: `pglite:${folder}`, PORT: String(portOf(taken)) });
      expect(await r.exited).toBe(1);
      expect(r.err()).toBe(`toolgate: cannot listen on 127.0.0.1:${portOf(taken)}: the port is in use\n`);
      expect([existsSync(folder), existsSync(`${folder}.lock`)]).toEqual([false, false]);
    } finally {
      taken.close();
    }
  });

  it('stops on SIGTERM sent to npm, freeing the port and the PGlite folder', async () => {
    const port = await freePort();
    const folder = join(dir, 'npm');
    const npm = run('npm', ['start', '--silent'], {
      PORT: String(port),
      DATABASE_URL: `pglite:${folder}`,
      TOOLGATE_ADMIN_KEY: 'k'.repeat(32),
    });
    await npm.ready;
    expect(existsSync(`${folder}.lock`)).toBe(true);
    expect(await stop(npm)).toBe(0);
    expect(existsSync(`${folder}.lock`)).toBe(false);
    (await listen(port)).close();
  });
});

describe.skipIf(!hasPostgres())(
  'two servers starting at once on one PostgreSQL',
  { timeout: 240_000 },
  () => {
    it('print one admin key between them', async () => {
      const db = await createTestDatabase('postgres', { migrated: false });
      try {
        const runs = [server({ DATABASE_URL: db.url }), server({ DATABASE_URL: db.url })];
        await Promise.all(runs.map((r) => r.ready));
        const keys = runs.flatMap((r) =>
          r
            .err()
            .split('\n')
            .filter((line) => ADMIN_KEY_LINE.test(line)),
        );
        expect(keys).toHaveLength(1);
        expect(await Promise.all(runs.map(stop))).toEqual([0, 0]);
      } finally {
        await db.drop();
      }
    });
  },
);
