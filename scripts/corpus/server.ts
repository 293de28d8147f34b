/**
 * A toolgate of its own for the measuring scripts (`npm run corpus`, `npm run search-bench`): the
 * server as its own process (`npm start`'s entry, PGlite in memory, a fresh admin key), an agent
 * provisioned over REST as a user would, and the process's memory read from /proc.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../test/support/ports.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ServerProcess {
  url: string;
  child: ChildProcess;
}

export interface Agent {
  apiKey: string;
  clientId: string;
}

/** Starts `server/main.ts` and answers once it says where it listens; rejects if it exits first. */
export async function startServer(
  adminKey: string,
  env: Record<string, string> = {},
): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: 'pglite:memory',
      TOOLGATE_ADMIN_KEY: adminKey,
      LOCAL_KEK: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const match = /toolgate: listening on (\S+);/.exec(text);
      if (match) resolve(match[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`the server exited (${code}): ${text}`)));
  });
  return { url, child };
}

/** A client and an API key with `tools:execute`, made through the admin REST API. */
export async function provisionAgent(url: string, adminKey: string, name = 'corpus'): Promise<Agent> {
  const headers = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' };
  const created = await fetch(`${url}/admin/clients`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name }),
  });
  if (created.status !== 200) throw new Error(`POST /admin/clients answered ${created.status}`);
  const client = (await created.json()) as { clientId: string };
  const issued = await fetch(`${url}/admin/clients/${client.clientId}/api-keys`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ scopes: ['tools:execute'] }),
  });
  if (issued.status !== 200) throw new Error(`POST /admin/clients/…/api-keys answered ${issued.status}`);
  const key = (await issued.json()) as { apiKey: string };
  return { apiKey: key.apiKey, clientId: client.clientId };
}

/** The process's resident memory now (`VmRSS`) and at its peak (`VmHWM`), in bytes; 0 when unknown. */
export async function memoryOf(child: ChildProcess): Promise<{ rss: number; peak: number }> {
  try {
    const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
    const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) * 1024;
    return { rss: kib('VmRSS'), peak: kib('VmHWM') };
  } catch {
    return { rss: 0, peak: 0 };
  }
}
