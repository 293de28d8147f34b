/**
 * `npm run admin -- …` against a running server. The CLI's `main` runs in this process with its
 * output captured, as its entry point runs it (the same arguments, environment and exit codes);
 * one case spawns the script as a user would, for the entry point itself. Spawning every case
 * cost a TypeScript load per case: most of this file's time.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { main } from '../../scripts/admin.ts';
import { provisionAgent } from '../support/agent.ts';
import { call, startServer, type TestServer } from '../support/server.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** The environment of a run: this process's without the CLI's own variables, then `env`. */
function cliEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env };
  delete base.TOOLGATE_URL;
  delete base.TOOLGATE_ADMIN_KEY;
  return { ...base, ...env };
}

/** The CLI in this process, its output captured; a throw is answered as the entry point answers it. */
async function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<CliRun> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const streams = {
    stdout: { write: (text: string) => stdout.push(text) },
    stderr: { write: (text: string) => stderr.push(text) },
  };
  let code: number;
  try {
    code = await main(args, cliEnv(env), streams);
  } catch (error) {
    stderr.push(`toolgate admin: unexpected failure: ${(error as Error)?.stack ?? String(error)}\n`);
    code = 1;
  }
  return { code, stdout: stdout.join(''), stderr: stderr.join('') };
}

/** The CLI as a user runs it: `node --import tsx scripts/admin.ts …`, a process of its own. */
function spawnCli(args: string[], env: Record<string, string | undefined> = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', TSX, path.join(ROOT, 'scripts/admin.ts'), ...args],
      { cwd: ROOT, env: cliEnv(env), timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

// The CLI talks REST to a server whatever its database: one backend is enough.
describe('admin CLI', { timeout: 180_000 }, () => {
  let server: TestServer;
  let upstream: Upstream;
  let dir: string;
  let env: Record<string, string>;
  const run = (...args: string[]) => cli(args, env);

  beforeAll(async () => {
    server = await startServer('pglite');
    upstream = await startUpstream();
    dir = await mkdtemp(path.join(os.tmpdir(), 'toolgate-cli-'));
    env = { TOOLGATE_URL: server.url, TOOLGATE_ADMIN_KEY: server.adminKey };
  });
  afterAll(async () => {
    await server?.close();
    await upstream?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('--help prints the commands and exits 0; no command exits 2 (the script run as a process)', async () => {
    const help = await spawnCli(['--help'], env);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: npm run admin -- <command>/);
    for (const command of [
      'clients create',
      'redirect-uris add',
      'keys create',
      'keys revoke',
      'apps put',
      'apps delete',
    ])
      expect(help.stdout).toContain(command);
    const none = await spawnCli([], env);
    expect(none.code).toBe(2);
    expect(none.stdout).toBe(help.stdout);
    expect(await run('--help')).toEqual(help);
  });

  it('usage mistakes exit 2 with a pointer to --help, before any request', async () => {
    const cases = [
      ['clients', 'frobnicate'],
      ['clients', 'create'],
      ['keys', 'create', 'cli_x'],
      ['clients', 'list', '--scopes', 'x'],
      ['clients', 'list', '--no-such-flag'],
      ['apps', 'put', 'x', '--provider', 'a.b'],
    ];
    const results = await Promise.all(cases.map((args) => run(...args)));
    for (const [index, result] of results.entries()) {
      expect(result.code, cases[index]?.join(' ')).toBe(2);
      expect(result.stderr).toMatch(/^toolgate admin: .+\nRun with --help for the commands\.\n$/);
      expect(result.stdout).toBe('');
    }
    const typos = await Promise.all([
      run('keys', 'create', 'cli_x', '--scope', 'admin'),
      run('clients', 'list', '--jsn'),
      run('clients', 'list', '--frobnicate'),
      run('keys', 'create', 'cli_x', '--scopes'),
    ]);
    expect(typos.map((r) => [r.code, r.stderr])).toEqual(
      [
        'unknown option --scope; did you mean --scopes?',
        'unknown option --jsn; did you mean --json?',
        'unknown option --frobnicate',
        'option --scopes needs a value',
      ].map((line) => [2, `toolgate admin: ${line}\nRun with --help for the commands.\n`]),
    );
    const noKey = await cli(['clients', 'list'], { TOOLGATE_URL: server.url });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('TOOLGATE_ADMIN_KEY');
  });

  it('a mistyped command names the likely one, as options do; else the commands of its noun', async () => {
    const commands = await Promise.all([
      run('client', 'list'),
      run('clients', 'lst'),
      run('clients', 'frobnicate'),
      run('clients'),
      run('frobnicate', 'now'),
    ]);
    expect(commands.map((r) => [r.code, r.stderr])).toEqual(
      [
        'unknown command "client list"; did you mean "clients list"?',
        'unknown command "clients lst"; did you mean "clients list"?',
        'unknown command "clients frobnicate"; the clients commands are clients create, clients list',
        'clients needs a command: clients create, clients list',
        'unknown command "frobnicate now"',
      ].map((line) => [2, `toolgate admin: ${line}\nRun with --help for the commands.\n`]),
    );
  });

  it('clients, redirect URIs and keys: create, list, revoke', async () => {
    const created = await run('clients', 'create', 'Acme agent');
    expect(created.code).toBe(0);
    const clientId = /Created client (cli_\w+) "Acme agent"/.exec(created.stdout)?.[1] as string;
    expect(clientId).toBeDefined();

    const listed = await run('clients', 'list');
    expect(listed.stdout).toMatch(/^CLIENT ID\s+NAME\s+CREATED\n/);
    expect(listed.stdout).toContain(`${clientId}  Acme agent`);
    const json = await run('clients', 'list', '--json');
    expect(JSON.parse(json.stdout).clients).toContainEqual(
      expect.objectContaining({ clientId, name: 'Acme agent' }),
    );

    const uri = 'https://agent.example/oauth/done?tenant=7';
    expect((await run('redirect-uris', 'add', clientId, uri)).stdout).toBe(
      `Registered ${uri} on ${clientId}.\n`,
    );
    expect((await run('redirect-uris', 'list', clientId)).stdout).toBe(`${uri}\n`);
    const bad = await run('redirect-uris', 'add', clientId, 'https://agent.example/cb#frag');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe(
      'toolgate admin: invalid_request 400: The request does not have the expected shape.\n' +
        '  /uri: Must not contain a fragment.\n',
    );
    expect((await run('redirect-uris', 'remove', clientId, uri)).code).toBe(0);
    expect((await run('redirect-uris', 'list', clientId)).stdout).toBe('No redirect URIs.\n');

    const key = await run(
      'keys',
      'create',
      clientId,
      '--scopes',
      'tools:execute, connections:read',
      '--name',
      'ci',
      '--json',
    );
    expect(key.code).toBe(0);
    const issued = JSON.parse(key.stdout);
    expect(issued).toEqual({
      keyId: expect.any(String),
      apiKey: expect.any(String),
      scopes: ['tools:execute', 'connections:read'],
    });
    const works = await call(server.url, 'GET', '/tools', { key: issued.apiKey, clientId });
    expect(works.status).toBe(200);

    const text = await run('keys', 'create', clientId, '--scopes', 'tools:execute');
    expect(text.stdout).toMatch(
      /^Issued API key key_\w+ to cli_\w+ \(scopes: tools:execute\)\.\n\n {2}\S+\n\nStore it now/,
    );

    const unknownScope = await run('keys', 'create', clientId, '--scopes', 'tools:everything');
    expect(unknownScope.code).toBe(1);
    expect(unknownScope.stderr).toBe(
      'toolgate admin: invalid_request 400: Some scopes are not known.\n' +
        '  /scopes/0: Unknown scope "tools:everything"; the scopes are tools:execute, tools:execute:<appId>, oauth:initiate, connections:read, connections:write, admin.\n',
    );

    const revoked = await run('keys', 'revoke', issued.keyId);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toContain(`Revoked ${issued.keyId}`);

    // Listing shows each key's metadata, never a key, its hash or its prefix.
    const listedKeys = await call(server.url, 'GET', `/admin/clients/${clientId}/api-keys`, {
      key: server.adminKey,
    });
    const textKeyId = /key_\w+/.exec(text.stdout)?.[0];
    expect([listedKeys.status, listedKeys.body]).toEqual([
      200,
      {
        keys: [
          {
            keyId: issued.keyId,
            name: 'ci',
            scopes: ['tools:execute', 'connections:read'],
            createdAt: expect.stringMatching(/Z$/),
            lastUsedAt: expect.stringMatching(/Z$/),
            revokedAt: expect.stringMatching(/Z$/),
          },
          {
            keyId: textKeyId,
            name: null,
            scopes: ['tools:execute'],
            createdAt: expect.stringMatching(/Z$/),
            lastUsedAt: null,
            revokedAt: null,
          },
        ],
      },
    ]);
    expect(listedKeys.text).not.toContain(issued.apiKey.slice(0, 12));
    const keysText = await run('keys', 'list', clientId);
    expect(keysText.stdout).toMatch(/^KEY ID\s+NAME\s+SCOPES\s+CREATED\s+LAST USED\s+REVOKED\n/);
    expect(keysText.stdout).toContain(`${textKeyId}  -     tools:execute  `);
    expect(JSON.parse((await run('keys', 'list', clientId, '--json')).stdout)).toEqual(listedKeys.body);
    const noClient = await run('keys', 'list', 'cli_never_made');
    expect([noClient.code, noClient.stderr]).toEqual([
      1,
      'toolgate admin: not_found 404: No client has this id.\n',
    ]);
    const refused = await call(server.url, 'GET', '/tools', { key: issued.apiKey, clientId });
    expect(refused.status).toBe(401);
    const unknown = await run('keys', 'revoke', 'key_never_issued');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('toolgate admin: not_found 404: No API key has this id.\n');
  });

  it('apps: put from JSON and YAML with auth, list, get without secrets, delete', async () => {
    const jsonFile = path.join(dir, 'upstream.json');
    const yamlFile = path.join(dir, 'upstream.yaml');
    const authFile = path.join(dir, 'auth.json');
    await writeFile(jsonFile, JSON.stringify(upstream.openapi));
    await writeFile(yamlFile, stringify(upstream.openapi));
    await writeFile(
      authFile,
      JSON.stringify({ type: 'api_key', in: 'header', name: 'X-Api-Key', value: 'sekret-value-123' }),
    );

    const fromJson = await run('apps', 'put', 'upjson', '--openapi', jsonFile, '--provider', 'toolgate.test');
    expect(fromJson.code).toBe(0);
    expect(fromJson.stdout).toMatch(
      /^Registered app upjson: 16 tools, 0 skipped\.\n {2}upjson:::listItems\n/,
    );
    expect(fromJson.stderr).toBe('');

    const fromYaml = await run(
      'apps',
      'put',
      'upyaml',
      '--openapi',
      yamlFile,
      '--provider',
      'toolgate.test',
      '--base-url',
      upstream.url,
      '--auth-file',
      authFile,
      '--json',
    );
    expect(fromYaml.code).toBe(0);
    expect(JSON.parse(fromYaml.stdout)).toEqual({
      appId: 'upyaml',
      tools: expect.arrayContaining(['getItem']),
      skipped: [],
    });

    const inline = await run(
      'apps',
      'put',
      'upinline',
      '--openapi',
      jsonFile,
      '--provider',
      'toolgate.test',
      '--auth-json',
      '{"type":"oauth2","authorizationUrl":"https://p.example/auth","tokenUrl":"https://p.example/token","clientId":"cid","clientSecret":"csecret-123","scopes":["profile:read"]}',
    );
    expect(inline.code).toBe(0);

    const listed = await run('apps', 'list');
    expect(listed.stdout).toMatch(/^APP ID\s+PROVIDER\s+AUTH\s+TOOLS\s+BASE URL\n/);
    expect(listed.stdout).toMatch(/upyaml\s+toolgate\.test\s+api_key\s+\d+\s+http:\/\/127\.0\.0\.1/);

    const shown = await run('apps', 'get', 'upinline');
    expect(shown.stdout).toContain('App upinline');
    expect(shown.stdout).toContain('auth:      oauth2');
    expect(shown.stdout).toContain('client id: cid (secret hidden)');
    expect(shown.stdout).toContain('upinline:::getMe');
    const shownYaml = await run('apps', 'get', 'upyaml', '--json');
    expect(JSON.parse(shownYaml.stdout).auth).toEqual({ type: 'api_key', in: 'header', name: 'X-Api-Key' });
    for (const out of [shown.stdout, shownYaml.stdout, listed.stdout]) {
      expect(out).not.toContain('sekret-value-123');
      expect(out).not.toContain('csecret-123');
    }

    const badProvider = await run('apps', 'put', 'x', '--openapi', jsonFile, '--provider', 'NotAProvider');
    expect(badProvider.code).toBe(1);
    expect(badProvider.stderr).toContain('/provider: ');
    const badJson = await run(
      'apps',
      'put',
      'x',
      '--openapi',
      jsonFile,
      '--provider',
      'a.b',
      '--auth-json',
      '{nope',
    );
    expect(badJson.code).toBe(2);
    const missingFile = await run(
      'apps',
      'put',
      'x',
      '--openapi',
      path.join(dir, 'nope.json'),
      '--provider',
      'a.b',
    );
    expect(missingFile.code).toBe(2);
    expect(missingFile.stderr).toContain('cannot read');

    expect((await run('apps', 'delete', 'upjson')).stdout).toBe(
      "Deleted app upjson and its users' grants.\n",
    );
    const gone = await run('apps', 'get', 'upjson');
    expect(gone.code).toBe(1);
    expect(gone.stderr).toBe('toolgate admin: app_not_found 404: No app upjson is registered.\n');
    const goneJson = await run('apps', 'get', 'upjson', '--json');
    expect(JSON.parse(goneJson.stdout)).toEqual({
      ok: false,
      error: 'app_not_found',
      message: expect.any(String),
      app_id: 'upjson',
    });
  });

  it('a large registration: says it is sending, then counts the tools; --verbose lists them', {
    timeout: 180_000,
  }, async () => {
    // 30 operations, one of them unservable, and a description that makes the file over 1 MiB.
    const paths: Record<string, unknown> = {};
    for (let i = 0; i < 30; i++) {
      const schema = i === 29 ? { type: 'string', minLength: -1 } : { type: 'string' };
      paths[`/things/${i}`] = {
        get: {
          operationId: `getThing${i}`,
          parameters: [{ name: 'q', in: 'query', schema }],
          responses: { 200: { description: 'ok' } },
        },
      };
    }
    const big = {
      openapi: '3.1.0',
      info: { title: 'big', version: '1', description: 'x'.repeat(1_200_000) },
      servers: [{ url: upstream.url }],
      paths,
    };
    const file = path.join(dir, 'big.json');
    await writeFile(file, JSON.stringify(big));
    const put = await run('apps', 'put', 'big', '--openapi', file, '--provider', 'toolgate.test');
    expect(put).toEqual({
      code: 0,
      stdout:
        'Registered app big: 29 tools (--verbose lists them), 1 skipped.\nSkipped:\n' +
        '  GET /things/29 (getThing29): Its parameter schema is not a valid JSON Schema (at /properties/q/minLength: Must be at least 0).\n',
      stderr: `Sending ${file} (1.1 MB); the server reads it and compiles its tools, which takes a few seconds…\n`,
    });
    const verbose = await run(
      'apps',
      'put',
      'big',
      '--openapi',
      file,
      '--provider',
      'toolgate.test',
      '--verbose',
    );
    const lines = verbose.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('Registered app big: 29 tools, 1 skipped.');
    expect(lines.slice(1, 30)).toEqual(Array.from({ length: 29 }, (_, i) => `  big:::getThing${i}`));
    expect(lines.slice(30)).toEqual([
      'Skipped:',
      '  GET /things/29 (getThing29): Its parameter schema is not a valid JSON Schema (at /properties/q/minLength: Must be at least 0).',
    ]);

    const shown = await run('apps', 'get', 'big');
    expect(shown.stdout).toMatch(/\n {2}tools: {5}29 tools \(--verbose lists them\)\n$/);
    const all = await run('apps', 'get', 'big', '--verbose');
    expect(all.stdout).toContain('  tools (29):\n    big:::getThing0\n');
    expect((await run('clients', 'list', '--verbose')).stderr).toBe(
      'toolgate admin: clients list does not take --verbose\nRun with --help for the commands.\n',
    );
  });

  it('flags instead of the environment; refused keys and unreachable servers exit 1 with the reason', async () => {
    const flags = await cli([
      '--url',
      server.url,
      '--admin-key',
      server.adminKey,
      'clients',
      'list',
      '--json',
    ]);
    expect(flags.code).toBe(0);

    const wrong = await run('clients', 'list', '--admin-key', 'tg_key_not_a_real_key_at_all_0000');
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toBe(
      'toolgate admin: invalid_api_key 401: The API key is missing, malformed, unknown or revoked.\n',
    );

    const agent = await provisionAgent(server, ['tools:execute']);
    const notAdmin = await run('apps', 'list', '--admin-key', agent.apiKey);
    expect(notAdmin.code).toBe(1);
    expect(notAdmin.stderr).toContain('rbac_denied 403');
    expect(notAdmin.stderr).toContain('the key needs the scope admin');

    const away = await cli(['clients', 'list'], {
      TOOLGATE_URL: 'http://127.0.0.1:9',
      TOOLGATE_ADMIN_KEY: server.adminKey,
    });
    expect(away.code).toBe(1);
    expect(away.stderr).toMatch(/^toolgate admin: network_error: .+\(http:\/\/127\.0\.0\.1:9\)\n$/);
  });
});
