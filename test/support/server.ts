import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { type App, createApp } from '../../server/app.ts';
import type { Clock } from '../../server/clock.ts';
import { loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/logger.ts';
import { HEADER } from '../../shared/headers.ts';
import { createTestDatabase } from './db.ts';
import { freePort } from './ports.ts';

export interface TestServer {
  url: string;
  app: App;
  adminKey: string;
  databaseUrl: string;
  /** Every log line the server wrote, for secret scans. */
  logs: string[];
  close(): Promise<void>;
}

export interface StartOptions {
  env?: Record<string, string>;
  clock?: Clock;
  /** Reuse a database (e.g. two servers on one PostgreSQL); otherwise a fresh one is made. */
  databaseUrl?: string;
  /**
   * Listen on a port chosen before the server starts, PUBLIC_URL being `http://127.0.0.1:<port>`: for
   * an OAuth provider that must know toolgate's real callback first. Another port is taken when
   * something else bound the chosen one in the meantime (EADDRINUSE).
   */
  ownPublicUrl?: boolean;
}

export const TEST_LOCAL_KEK = randomBytes(32).toString('base64');

/** A real server on 127.0.0.1:<free port>, on a fresh migrated database of the given backend. */
export async function startServer(
  backend: 'pglite' | 'postgres',
  options: StartOptions = {},
): Promise<TestServer> {
  if (!options.ownPublicUrl) return startOnce(backend, options);
  for (let attempt = 1; ; attempt += 1) {
    const port = await freePort();
    const env = { ...options.env, PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` };
    try {
      return await startOnce(backend, { ...options, env });
    } catch (error) {
      if ((error as { code?: string }).code !== 'EADDRINUSE' || attempt === 5) throw error;
    }
  }
}

async function startOnce(backend: 'pglite' | 'postgres', options: StartOptions): Promise<TestServer> {
  const fresh = options.databaseUrl ? undefined : await createTestDatabase(backend);
  const databaseUrl = options.databaseUrl ?? (fresh as { url: string }).url;
  const adminKey = `admin-${randomBytes(24).toString('hex')}`;
  const loaded = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl,
    TOOLGATE_ADMIN_KEY: adminKey,
    LOCAL_KEK: TEST_LOCAL_KEK,
    LOG_LEVEL: 'info',
    ...options.env,
  });
  if (!loaded.ok) throw new Error(`test config: ${loaded.error.variable} ${loaded.error.problem}`);
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const app = await createApp(loaded.value, { logger: createLogger('info', sink), clock: options.clock });
  let url: string;
  try {
    url = await app.listen();
  } catch (error) {
    // A chosen PORT can be taken meanwhile (EADDRINUSE): leave nothing open, let startServer retry.
    await app.close();
    await fresh?.drop();
    throw error;
  }
  return {
    url,
    app,
    adminKey,
    databaseUrl,
    logs,
    close: async () => {
      await app.close();
      await fresh?.drop();
    },
  };
}

export interface Reply {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers and assert them whole.
  body: any;
  text: string;
}

export interface CallOptions {
  key?: string;
  clientId?: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** Sent as is, bypassing JSON encoding. */
  raw?: string | Buffer;
  /** `manual` answers a redirect itself instead of following it (default `follow`). */
  redirect?: RequestInit['redirect'];
}

/** The headers and body `options` make (the key, the client id, a JSON or raw body). */
export function requestParts(options: CallOptions): {
  headers: Record<string, string>;
  body: string | Buffer | undefined;
} {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers[HEADER.authorization] = `Bearer ${options.key}`;
  if (options.clientId !== undefined) headers[HEADER.clientId] = options.clientId;
  let body: string | Buffer | undefined;
  if (options.raw !== undefined) body = options.raw;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  return { headers, body };
}

/** One HTTP call to the server, answering status, headers and the parsed body. */
export async function call(
  baseUrl: string,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<Reply> {
  const { headers, body } = requestParts(options);
  const response = await fetch(new URL(path, baseUrl), { method, headers, body, redirect: options.redirect });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {}
  return { status: response.status, headers: response.headers, body: parsed, text };
}
