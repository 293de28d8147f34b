// PGlite is PostgreSQL in one process: two processes opening one data folder at once corrupt it, and
// PGlite does not prevent that. The server and the Prisma schema engine shim therefore hold a lock
// file next to the folder (`<dir>.lock`, holding the owner's pid) while they have it open.
// Plain JavaScript so that scripts/prisma-schema-engine.mjs can share it.
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';

export class PgliteLockedError extends Error {
  constructor(dataDir, pid) {
    super(`PGlite folder ${dataDir} is in use by process ${pid}; PGlite allows one process per folder`);
    this.name = 'PgliteLockedError';
    this.pid = pid;
  }
}

function owner(file) {
  try {
    const [pid, host] = readFileSync(file, 'utf8').split('\n');
    return { pid: Number(pid), host };
  } catch {
    return undefined; // gone meanwhile, or half written: try again
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/**
 * Takes the lock of `dataDir`, waiting up to `waitMs` for a live holder to let go (a CLI run that
 * is still shutting down). A lock left by a dead process is taken over. Resolves to `release()`.
 */
export async function lockPgliteDir(dataDir, { waitMs = 0 } = {}) {
  const file = `${dataDir}.lock`;
  const me = `${process.pid}\n${hostname()}\n`;
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, me);
      closeSync(fd);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
    }
    const holder = owner(file);
    if (holder && holder.host === hostname() && holder.pid !== process.pid && !alive(holder.pid)) {
      try {
        unlinkSync(file);
      } catch {}
      continue;
    }
    if (Date.now() >= deadline) throw new PgliteLockedError(dataDir, holder?.pid ?? 'unknown');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    try {
      if (readFileSync(file, 'utf8') === me) unlinkSync(file);
    } catch {}
  };
}
