/**
 * The README's walk-through, run as CI runs it: the fenced `sh` blocks marked `<!-- walk-through`
 * are taken from README.md itself (so README and test cannot drift) and run, in order, as one bash
 * script, in a fresh git copy of the repository, against a free port and a new embedded database —
 * as a newcomer runs them after `npm ci`. It must work, show what the README says it shows, leave
 * `git status` clean, and stop at a step that fails (another server on the port) without going on.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/ports.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The marked blocks of the README, in order. */
function walkThrough(readme: string): string[] {
  const blocks: string[] = [];
  const pattern = /^<!-- walk-through[^\n]*-->\n```sh\n([\s\S]*?)\n```$/gm;
  for (const match of readme.matchAll(pattern)) blocks.push(match[1] as string);
  return blocks;
}

/** The environment of a newcomer's shell: none of npm's variables, nor toolgate settings of ours. */
function shellEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(npm_|TOOLGATE_|DATABASE_URL$|PORT$|PETS_PORT$|LOCAL_KEK$|VITEST|NODE_OPTIONS$)/i.test(key))
      continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `script` with bash in `cwd`, in a process group of its own, which is ended afterwards. */
async function bash(script: string, cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Ran> {
  const child: ChildProcess = spawn('bash', ['-c', script], {
    cwd,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  const group = () => {
    try {
      process.kill(-(child.pid as number), 'SIGTERM');
    } catch {
      // the group is gone: nothing was left
    }
  };
  const timer = setTimeout(group, timeoutMs);
  // On exit, not on close: a server it left running would hold the pipes open.
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  clearTimeout(timer);
  group(); // whatever the script left running (a server, when it stopped early)
  await new Promise((resolve) =>
    child.stdout?.readableEnded ? resolve(null) : child.stdout?.on('close', resolve),
  );
  return { code, stdout, stderr };
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=ci', '-c', 'user.email=ci@example.invalid', ...args], {
    cwd,
    encoding: 'utf8',
  });

describe('README walk-through', { timeout: 300_000 }, () => {
  let copy: string;
  let blocks: string[];

  beforeAll(() => {
    blocks = walkThrough(readFileSync(path.join(ROOT, 'README.md'), 'utf8'));
    // A clone of the working tree as it is (tracked and new files), with the installed packages.
    copy = mkdtempSync(path.join(os.tmpdir(), 'toolgate-readme-'));
    const files = git(ROOT, 'ls-files', '-z', '--cached', '--others', '--exclude-standard')
      .split('\0')
      .filter((file) => file !== '');
    for (const file of files) {
      mkdirSync(path.dirname(path.join(copy, file)), { recursive: true });
      try {
        cpSync(path.join(ROOT, file), path.join(copy, file));
      } catch {
        // listed but deleted in the working tree
      }
    }
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));
    symlinkSync(path.join(ROOT, 'server', 'db', 'generated'), path.join(copy, 'server', 'db', 'generated'));
    git(copy, 'init', '-q');
    // The links stand for what `npm ci` installs and generates; the copy's own .gitignore covers the rest.
    writeFileSync(path.join(copy, '.git', 'info', 'exclude'), '/node_modules\n/server/db/generated\n');
    git(copy, 'add', '-A');
    git(copy, 'commit', '-q', '-m', 'the working tree');
    // What `npm ci` builds (postinstall), into the copy's own dist/.
    execFileSync(process.execPath, ['scripts/build.mjs', '--bundle-only'], { cwd: copy, stdio: 'pipe' });
  });
  afterAll(() => {
    if (copy) rmSync(copy, { recursive: true, force: true });
  });

  it('is marked in the README: the start, the calls, the retries and the stop', () => {
    expect(blocks).toHaveLength(3);
    expect(blocks[0]?.startsWith('set -euo pipefail;')).toBe(true);
    // Emptied before the start, in the foreground: the background job's own `>` may come after the
    // wait below has read a previous run's "listening" line (the port test once ran on past it).
    expect(blocks[0]).toContain(': > toolgate.log; npm start >> toolgate.log 2>&1 & SERVER=$!');
    expect(blocks.at(-1)).toBe('kill $SERVER $PETS');
  });

  it('runs as written, shows what the README says, and leaves git status clean', async () => {
    const [port, petsPort] = [await freePort(), await freePort()];
    const ran = await bash(
      blocks.join('\n'),
      copy,
      shellEnv({ PORT: String(port), PETS_PORT: String(petsPort) }),
      240_000,
    );
    expect(ran.code, `${ran.stdout}\n${ran.stderr}`).toBe(0);
    const out = ran.stdout;
    // Each answer on a line of its own (curl -w '\\n'), as the README shows them.
    expect(out).toMatch(/^\{"clientId":"cli_\w+","uri":"https:\/\/agent.example\/oauth\/done"\}$/m);
    expect(out).toContain('\n{"appId":"pets","tools":["listPets","addPet","getPetById"],"skipped":[]}\n');
    expect(out).toContain('pets:::listPets\npets:::addPet\npets:::getPetById\n');
    expect(out).toMatch(/\["pets:::addPet",[0-9.]+\]/);
    expect(out).toMatch(
      /^\{"ok":true,"data":\{"id":1,"name":"Rex","tag":"dog"\},"meta":\{"tool_id":"pets:::getPetById","duration_ms":\d+,"provider":"example.pets"\}\}$/m,
    );
    expect(out).toMatch(/^\{"ok":false,"error":"invalid_parameters",/m);
    expect(out).toContain('"issues":[{"path":"/petId"');
    expect(out).toMatch(/^\{"ok":true,"data":\{"id":3,"name":"Bo"\}/m);
    expect(out, out).toMatch(/^x-service-idempotent-replayed: true\r?$/im);
    expect(out).toContain(
      '\n[["rest","pets:::addPet","ok",200,true],["rest","pets:::addPet","ok",200,false],["rest","pets:::getPetById","invalid_parameters",400,false]]\n',
    );
    expect(ran.stderr).not.toContain('walk-through stopped');
    // The first start's lines, the database and the key stay out of git: all are ignored.
    const log = readFileSync(path.join(copy, 'toolgate.log'), 'utf8');
    expect(log).toContain('toolgate: creating the embedded database in ./.toolgate/db');
    expect(git(copy, 'status', '--porcelain', '--untracked-files=all')).toBe('');
  });

  it('stops at the start when another server holds the port, and runs nothing after it', async () => {
    const port = await freePort();
    let connections = 0;
    const squatter = createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve));
    // A previous run's log, as a newcomer running the walk-through again has: its "listening" line
    // must not be taken for this start's.
    writeFileSync(
      path.join(copy, 'toolgate.log'),
      'toolgate: listening on http://127.0.0.1:3000 (a previous run)\n',
    );
    try {
      const ran = await bash(
        blocks.join('\n'),
        copy,
        shellEnv({ PORT: String(port), PETS_PORT: String(await freePort()) }),
        120_000,
      );
      expect(ran.code).not.toBe(0);
      expect(ran.stdout).toContain(`toolgate: cannot listen on 127.0.0.1:${port}: the port is in use`);
      expect(ran.stdout).not.toContain('cli_');
      expect(connections).toBe(0);
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  });
});
