import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.ts';

const KEK = Buffer.alloc(32, 7).toString('base64');

describe('loadConfig', () => {
  it('applies the contract defaults', () => {
    const result = loadConfig({});
    expect(result).toEqual({
      ok: true,
      value: {
        port: 3000,
        host: '127.0.0.1',
        publicUrl: 'http://127.0.0.1:3000',
        databaseUrl: 'pglite:./.toolgate/db',
        adminKey: undefined,
        kms: { kind: 'local', kek: undefined, kekPath: './.toolgate/kek' },
        maxBodyBytes: 1_048_576,
        maxDocumentBytes: 67_108_864,
        maxUpstreamBodyBytes: 10_485_760,
        mcpAllowedOrigins: [],
        mcpMaxListedTools: 128,
        upstreamTimeoutMs: 30_000,
        headersTimeoutMs: 10_000,
        requestTimeoutMs: 30_000,
        rateLimitPerKeyPerMin: 600,
        callLogDays: 30,
        otlpEndpoint: undefined,
        logLevel: 'info',
        login: undefined,
        cimdAllowHttpLoopback: false,
      },
    });
  });

  it('reads every variable', () => {
    const result = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      PUBLIC_URL: 'https://tools.example/',
      DATABASE_URL: 'postgresql://u@db/x',
      TOOLGATE_ADMIN_KEY: 'k'.repeat(32),
      KMS: 'azure-key-vault',
      AZURE_KEY_VAULT_KEY_ID: 'https://v.vault.azure.net/keys/k',
      MAX_BODY_BYTES: '2048',
      MAX_DOCUMENT_BYTES: '4096',
      MAX_UPSTREAM_BODY_BYTES: '8192',
      MCP_ALLOWED_ORIGINS: 'https://app.example, http://localhost:5173/',
      MCP_MAX_LISTED_TOOLS: '40',
      UPSTREAM_TIMEOUT_MS: '500',
      REQUEST_HEADERS_TIMEOUT_MS: '2000',
      REQUEST_TIMEOUT_MS: '9000',
      RATE_LIMIT_PER_KEY_PER_MIN: '0',
      CALL_LOG_DAYS: '0',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
      LOG_LEVEL: 'warn',
      LOGIN_OIDC_ISSUER: 'https://login.example/realms/x',
      LOGIN_OIDC_CLIENT_ID: 'toolgate',
      LOGIN_OIDC_CLIENT_SECRET: 'login-secret',
      CIMD_ALLOW_HTTP_LOOPBACK: '1',
    });
    expect(result).toEqual({
      ok: true,
      value: {
        port: 8080,
        host: '0.0.0.0',
        publicUrl: 'https://tools.example',
        databaseUrl: 'postgresql://u@db/x',
        adminKey: 'k'.repeat(32),
        kms: { kind: 'azure-key-vault', keyId: 'https://v.vault.azure.net/keys/k' },
        maxBodyBytes: 2048,
        maxDocumentBytes: 4096,
        maxUpstreamBodyBytes: 8192,
        mcpAllowedOrigins: ['https://app.example', 'http://localhost:5173'],
        mcpMaxListedTools: 40,
        upstreamTimeoutMs: 500,
        headersTimeoutMs: 2000,
        requestTimeoutMs: 9000,
        rateLimitPerKeyPerMin: 0,
        callLogDays: 0,
        otlpEndpoint: 'http://collector:4318',
        logLevel: 'warn',
        login: {
          issuer: 'https://login.example/realms/x',
          clientId: 'toolgate',
          clientSecret: 'login-secret',
        },
        cimdAllowHttpLoopback: true,
      },
    });
  });

  it('accepts a 32-byte LOCAL_KEK', () => {
    const result = loadConfig({ LOCAL_KEK: KEK });
    expect(result.ok && result.value.kms).toEqual({ kind: 'local', kek: KEK, kekPath: './.toolgate/kek' });
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT', 'must be a whole number from 0 to 65535'],
    [{ PORT: '70000' }, 'PORT', 'must be at most 65535'],
    [{ PUBLIC_URL: 'not a url' }, 'PUBLIC_URL', 'must be an absolute http(s) URL'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL', 'must be pglite:<dir>, pglite:memory or postgresql://…'],
    [{ TOOLGATE_ADMIN_KEY: 'short' }, 'TOOLGATE_ADMIN_KEY', 'must be at least 32 characters'],
    [{ KMS: 'vault' }, 'KMS', 'must be local or azure-key-vault'],
    [{ KMS: 'azure-key-vault' }, 'AZURE_KEY_VAULT_KEY_ID', 'is required when KMS=azure-key-vault'],
    [
      { LOCAL_KEK: Buffer.alloc(16).toString('base64') },
      'LOCAL_KEK',
      'must be the base64 of exactly 32 bytes',
    ],
    [{ MAX_BODY_BYTES: '-1' }, 'MAX_BODY_BYTES', 'must be a whole number from 1024 to 67108864'],
    [{ UPSTREAM_TIMEOUT_MS: '0' }, 'UPSTREAM_TIMEOUT_MS', 'must be at least 1'],
    [{ REQUEST_HEADERS_TIMEOUT_MS: '50' }, 'REQUEST_HEADERS_TIMEOUT_MS', 'must be at least 100'],
    [{ REQUEST_TIMEOUT_MS: '5000' }, 'REQUEST_TIMEOUT_MS', 'must be at least REQUEST_HEADERS_TIMEOUT_MS'],
    [
      { RATE_LIMIT_PER_KEY_PER_MIN: '1.5' },
      'RATE_LIMIT_PER_KEY_PER_MIN',
      'must be a whole number from 0 to 10000000',
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' },
      'OTEL_EXPORTER_OTLP_ENDPOINT',
      'must be the http(s) URL of an OTLP/HTTP receiver',
    ],
    [{ CALL_LOG_DAYS: '30d' }, 'CALL_LOG_DAYS', 'must be a whole number from 0 to 3650'],
    [{ CALL_LOG_DAYS: '3651' }, 'CALL_LOG_DAYS', 'must be at most 3650'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL', 'must be one of fatal, error, warn, info, debug, trace, silent'],
    [
      { LOGIN_OIDC_ISSUER: 'login.example' },
      'LOGIN_OIDC_ISSUER',
      'must be the absolute http(s) URL of an OpenID Connect issuer',
    ],
    [
      { LOGIN_OIDC_ISSUER: 'https://login.example', LOGIN_OIDC_CLIENT_ID: 'toolgate' },
      'LOGIN_OIDC_CLIENT_SECRET',
      'is required with the other LOGIN_OIDC_* variables (LOGIN_OIDC_ISSUER, LOGIN_OIDC_CLIENT_ID, LOGIN_OIDC_CLIENT_SECRET)',
    ],
    [{ CIMD_ALLOW_HTTP_LOOPBACK: 'yes' }, 'CIMD_ALLOW_HTTP_LOOPBACK', 'must be 0 or 1'],
  ])('rejects %j naming %s', (env, variable, problem) => {
    expect(loadConfig(env)).toEqual({ ok: false, error: { variable, problem } });
  });
});

// Absolute, so the server can run from any working directory (its .toolgate/ lands there).
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

function runServer(env: Record<string, string>, cwd: string) {
  const child = spawn(process.execPath, ['--import', TSX, join(process.cwd(), 'server/main.ts')], {
    cwd,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => {
    stdout += c;
  });
  child.stderr.on('data', (c) => {
    stderr += c;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, out: () => stdout, err: () => stderr };
}

describe('the server process', () => {
  it.each([
    [
      { TOOLGATE_ADMIN_KEY: 'too-short' },
      'toolgate: configuration error: TOOLGATE_ADMIN_KEY must be at least 32 characters',
    ],
    [
      { KMS: 'azure-key-vault' },
      'toolgate: configuration error: AZURE_KEY_VAULT_KEY_ID is required when KMS=azure-key-vault',
    ],
    [{ PORT: 'x' }, 'toolgate: configuration error: PORT must be a whole number from 0 to 65535'],
  ])('stops at start on a bad value with one line and no stack (%j)', async (env, line) => {
    const run = runServer(env, process.cwd());
    expect(await run.exited).toBe(1);
    expect(run.err()).toBe(`${line}\n`);
    expect(run.out()).toBe('');
  });

  it('starts on embedded defaults, serves, and shuts down gracefully on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-main-'));
    try {
      const run = runServer(
        { PORT: '0', DATABASE_URL: 'pglite:memory', LOCAL_KEK: KEK, LOG_LEVEL: 'info' },
        dir,
      );
      // Waits for the event itself: the line naming the URL, or the process ending without it.
      const url = await new Promise<string>((resolve, reject) => {
        run.child.stdout.on('data', () => {
          const m = /"url":"(http:\/\/[^"]+)"/.exec(run.out());
          if (m) resolve(m[1] as string);
        });
        void run.exited.then((code) => reject(new Error(`exited ${code} before serving: ${run.err()}`)));
      });
      const ready = await fetch(`${url}/readyz`);
      expect(ready.status).toBe(200);
      run.child.kill('SIGTERM');
      expect(await run.exited).toBe(0);
      expect(run.out()).toContain('"msg":"shutting down"');
      // The operator's lines (test/startup has them whole): the migration of the new folder, where
      // it listens, the first admin key.
      expect(run.err()).toMatch(
        /^toolgate: migrating the database: \d+ migrations to apply…\ntoolgate: listening on [^\n]+\ntoolgate: admin key: tg_key_[\w-]+\n[^\n]+\n$/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('refuses an unreachable PostgreSQL with one line', async () => {
    const run = runServer(
      // PORT 0: the port is bound before the database opens, and 3000 may be taken on this machine.
      { PORT: '0', DATABASE_URL: 'postgresql://nobody@127.0.0.1:1/none', LOCAL_KEK: KEK },
      process.cwd(),
    );
    expect(await run.exited).toBe(1);
    expect(run.err()).toMatch(/^toolgate: start-up failed: [^\n]+\n$/);
    expect(run.err()).not.toMatch(/\n\s+at /);
  });
});
