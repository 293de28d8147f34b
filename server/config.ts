import { z } from 'zod';
import { OAUTH_STATE_LIFETIME_MS } from '../shared/oauth-state.ts';
import { parseKek } from './crypto/kms/local.ts';
import { err, ok, type Result } from './result.ts';

/**
 * Every environment variable of docs/reference.md "Configuration", parsed once. Nothing else reads process.env.
 * Limits and time-outs that are not configurable live here too, so each has one home.
 */

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const integer = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, `must be a whole number from ${min} to ${max}`)
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));

const originList = (value: string): string[] =>
  value
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin.length > 0);

function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return url.origin !== 'null' && url.origin === value.replace(/\/$/, '').toLowerCase();
  } catch {
    return false;
  }
}

const envSchema = z
  .object({
    PORT: integer(0, 65535).default(3000),
    HOST: z.string().trim().min(1, 'must not be empty').default('127.0.0.1'),
    PUBLIC_URL: z
      .url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' })
      .transform((value) => value.replace(/\/+$/, ''))
      .optional(),
    DATABASE_URL: z
      .string()
      .trim()
      .regex(/^(pglite:.+|postgres(ql)?:\/\/.+)$/, 'must be pglite:<dir>, pglite:memory or postgresql://…')
      .default('pglite:./.toolgate/db'),
    TOOLGATE_ADMIN_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
    KMS: z.enum(['local', 'azure-key-vault'], { error: 'must be local or azure-key-vault' }).default('local'),
    LOCAL_KEK: z
      .string()
      .trim()
      .refine((value) => {
        try {
          parseKek(value);
          return true;
        } catch {
          return false;
        }
      }, 'must be the base64 of exactly 32 bytes')
      .optional(),
    AZURE_KEY_VAULT_KEY_ID: z
      .url({ protocol: /^https?$/, error: 'must be the URL of a Key Vault key' })
      .optional(),
    MAX_BODY_BYTES: integer(1024, 64 * 1024 * 1024).default(1024 * 1024),
    MAX_DOCUMENT_BYTES: integer(1024, 1024 * 1024 * 1024).default(64 * 1024 * 1024),
    MAX_UPSTREAM_BODY_BYTES: integer(1024, 1024 * 1024 * 1024).default(10 * 1024 * 1024),
    MCP_ALLOWED_ORIGINS: z
      .string()
      .refine(
        (value) => originList(value).every(isOrigin),
        'must be comma-separated origins such as https://app.example (scheme, host and optional port)',
      )
      .default(''),
    MCP_MAX_LISTED_TOOLS: integer(0, 1_000_000).default(128),
    UPSTREAM_TIMEOUT_MS: integer(1, 600_000).default(30_000),
    REQUEST_HEADERS_TIMEOUT_MS: integer(100, 600_000).default(10_000),
    REQUEST_TIMEOUT_MS: integer(100, 3_600_000).default(30_000),
    RATE_LIMIT_PER_KEY_PER_MIN: integer(0, 10_000_000).default(600),
    CALL_LOG_DAYS: integer(0, 3650).default(30),
    OTEL_EXPORTER_OTLP_ENDPOINT: z
      .url({ protocol: /^https?$/, error: 'must be the http(s) URL of an OTLP/HTTP receiver' })
      .transform((value) => value.replace(/\/+$/, ''))
      .optional(),
    LOG_LEVEL: z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }).default('info'),
    LOGIN_OIDC_ISSUER: z
      .url({ protocol: /^https?$/, error: 'must be the absolute http(s) URL of an OpenID Connect issuer' })
      .optional(),
    LOGIN_OIDC_CLIENT_ID: z.string().trim().min(1, 'must not be empty').optional(),
    LOGIN_OIDC_CLIENT_SECRET: z.string().min(1, 'must not be empty').optional(),
    CIMD_ALLOW_HTTP_LOOPBACK: z.enum(['0', '1'], { error: 'must be 0 or 1' }).default('0'),
  })
  .superRefine((env, ctx) => {
    // Node refuses a headers time-out longer than the whole request's.
    if (env.REQUEST_TIMEOUT_MS < env.REQUEST_HEADERS_TIMEOUT_MS) {
      ctx.addIssue({
        code: 'custom',
        path: ['REQUEST_TIMEOUT_MS'],
        message: 'must be at least REQUEST_HEADERS_TIMEOUT_MS',
      });
    }
    if (env.KMS === 'azure-key-vault' && !env.AZURE_KEY_VAULT_KEY_ID) {
      ctx.addIssue({
        code: 'custom',
        path: ['AZURE_KEY_VAULT_KEY_ID'],
        message: 'is required when KMS=azure-key-vault',
      });
    }
    // Sign-in is all or nothing: a provider without its client (or the reverse) is a typo, not a choice.
    const login = ['LOGIN_OIDC_ISSUER', 'LOGIN_OIDC_CLIENT_ID', 'LOGIN_OIDC_CLIENT_SECRET'] as const;
    const missing = login.find((name) => env[name] === undefined);
    if (missing && login.some((name) => env[name] !== undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: [missing],
        message: `is required with the other LOGIN_OIDC_* variables (${login.join(', ')})`,
      });
    }
  });

export interface Config {
  port: number;
  host: string;
  publicUrl: string;
  databaseUrl: string;
  adminKey: string | undefined;
  kms:
    | { kind: 'local'; kek: string | undefined; kekPath: string }
    | { kind: 'azure-key-vault'; keyId: string };
  maxBodyBytes: number;
  /** Body limit of PUT /admin/apps/{appId} (an app's OpenAPI document); every other route keeps maxBodyBytes. */
  maxDocumentBytes: number;
  maxUpstreamBodyBytes: number;
  /** Browser origins allowed to call /mcp (exact `scheme://host[:port]`). */
  mcpAllowedOrigins: string[];
  /** Above this many tools (after `apps`), `/mcp` lists the search pair instead of the catalog (mode=auto). */
  mcpMaxListedTools: number;
  upstreamTimeoutMs: number;
  /**
   * A client must have sent its request's headers within `headersTimeoutMs` and the whole request
   * within `requestTimeoutMs` (docs/reference.md "Limits"); else it is cut off with 408. Slow
   * bodies had held connections for Node's default 300 s, unauthenticated (issue 23, item 5).
   */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  rateLimitPerKeyPerMin: number;
  /** Days a call-log record is kept (docs/reference.md "Call log"); 0 keeps no call log. */
  callLogDays: number;
  /** Base URL of the OTLP/HTTP receiver of traces (`/v1/traces` is added); unset: no tracing. */
  otlpEndpoint: string | undefined;
  logLevel: (typeof LOG_LEVELS)[number];
  /**
   * The OpenID Connect provider people sign in with (docs/reference.md "MCP sign-in"); undefined
   * turns MCP sign-in off: its paths answer 404 and /mcp takes API keys only.
   */
  login: { issuer: string; clientId: string; clientSecret: string } | undefined;
  /** Admit http loopback Client ID Metadata Documents (development, tests). */
  cimdAllowHttpLoopback: boolean;
}

/** Fixed limits (docs/reference.md "Limits") and internal timings: the one home of each number. */
export const LIMITS = {
  oauthStateTtlMs: OAUTH_STATE_LIFETIME_MS,
  /** Used or expired states stay known this long past expiry, so late callbacks still redirect. */
  oauthStateRetentionMs: 24 * 60 * 60 * 1000,
  /**
   * Live (unused, unexpired) OAuth states per (client, user, app): a newer start drops the oldest
   * (issue 23: 2,000 starts by one key had stored 2,000 states, kept a day).
   */
  oauthLiveStatesPerGrant: 20,
  /** 2025-era MCP clients remembered per API key: the least recently initialized are forgotten. */
  mcpClientsPerKey: 50,
  idempotencyTtlMs: 24 * 60 * 60 * 1000,
  upstreamBodyExcerptBytes: 64 * 1024,
  /** A revoked key stops working within this time on every server. */
  apiKeyRecheckMs: 4_000,
  apiKeyCacheSize: 10_000,
  apiKeyLastUsedWriteMs: 60_000,
  /** Wrong keys remembered (by digest) apart from verified ones, so a flood cannot evict those. */
  apiKeyRefusedCacheSize: 10_000,
  /**
   * Failed verifications (argon2 runs for a wrong secret) allowed per key id and per client
   * address in one window; past them a wrong key is refused before argon2 runs.
   */
  apiKeyFailuresPerKeyId: 20,
  apiKeyFailuresPerAddress: 50,
  apiKeyFailureWindowMs: 60_000,
  refreshSkewMs: 60_000,
  /**
   * How long a refresh may wait for the token endpoint, whatever happens to the call that started
   * it (docs/reference.md "End-user OAuth"): a call waits for it at most UPSTREAM_TIMEOUT_MS, the
   * refresh itself runs on, so a provider that answers late (having rotated the refresh token)
   * still has its answer stored. Never less than UPSTREAM_TIMEOUT_MS.
   */
  refreshTimeoutMs: 60_000,
  shutdownGraceMs: 10_000,
  /**
   * Calls in one tRPC batch (docs/reference.md "Limits"): without a cap one request of 200
   * `tools.list` calls held a server for a minute and grew it past 1.8 GB (issue 23).
   */
  trpcMaxBatch: 10,
  /**
   * Bytes of tool definitions (schema text and description) in one `/tools` page: a page ends at
   * `limit` tools or at this size, whichever comes first, with a `next_cursor` (Kubernetes' tools
   * reach 66 KB each, so 1,000 of them would be tens of megabytes in one answer).
   */
  toolsPageBytes: 4 * 1024 * 1024,
  /**
   * Tools an MCP server may list (docs/reference.md "Apps from MCP servers"): real servers list tens;
   * GitHub's whole REST API is 1,223 operations. Past it the registration is refused, not cut.
   */
  mcpServerMaxTools: 5_000,
  /**
   * The call log's writer (observe/call-log.ts): records wait at most this long before a batch is
   * written, a batch holds at most callLogBatch records, and at most callLogBuffered wait in memory
   * (past it, while the database is away, new records are dropped and counted).
   */
  callLogFlushMs: 1_000,
  callLogBatch: 1_000,
  callLogBuffered: 50_000,
  /** How often each server purges call-log records older than CALL_LOG_DAYS. */
  callLogPurgeIntervalMs: 10 * 60 * 1000,
  /** How often each server purges MCP sign-in rows a day past their expiry (signin/purge.ts). */
  signinPurgeIntervalMs: 10 * 60 * 1000,
  /**
   * Bytes of a refused or unread request body still read after the answer, so the client reads
   * the answer (a 413…) instead of meeting a closed socket (EPIPE) while it is still sending;
   * past them the connection is closed (issue 23: 4 of 300 over-limit bodies ended in EPIPE).
   */
  drainBytes: 16 * 1024 * 1024,
  /** A web console session ends this long after sign-in, whatever happens (it ends sooner with its key). */
  consoleSessionMs: 12 * 60 * 60 * 1000,
} as const;

/** The settings, or the first variable that is wrong and what is wrong with it. */
export type ConfigResult = Result<Config, { variable: string; problem: string }>;

/** Treats empty strings as unset, as shells and .env files commonly produce them. */
function present(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined && value !== '') out[key] = value;
  return out;
}

/** PUBLIC_URL when it is not set: where the server listens. */
export function defaultPublicUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

export function loadConfig(env: NodeJS.ProcessEnv): ConfigResult {
  const parsed = envSchema.safeParse(present(env));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return err({
      variable: String(issue?.path[0] ?? 'environment'),
      problem: issue?.message ?? 'is invalid',
    });
  }
  const e = parsed.data;
  return ok({
    port: e.PORT,
    host: e.HOST,
    publicUrl: e.PUBLIC_URL ?? defaultPublicUrl(e.HOST, e.PORT),
    databaseUrl: e.DATABASE_URL,
    adminKey: e.TOOLGATE_ADMIN_KEY,
    kms:
      e.KMS === 'azure-key-vault'
        ? { kind: 'azure-key-vault', keyId: e.AZURE_KEY_VAULT_KEY_ID as string }
        : { kind: 'local', kek: e.LOCAL_KEK, kekPath: './.toolgate/kek' },
    maxBodyBytes: e.MAX_BODY_BYTES,
    maxDocumentBytes: e.MAX_DOCUMENT_BYTES,
    maxUpstreamBodyBytes: e.MAX_UPSTREAM_BODY_BYTES,
    mcpAllowedOrigins: originList(e.MCP_ALLOWED_ORIGINS).map((origin) => new URL(origin).origin),
    mcpMaxListedTools: e.MCP_MAX_LISTED_TOOLS,
    upstreamTimeoutMs: e.UPSTREAM_TIMEOUT_MS,
    headersTimeoutMs: e.REQUEST_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
    rateLimitPerKeyPerMin: e.RATE_LIMIT_PER_KEY_PER_MIN,
    callLogDays: e.CALL_LOG_DAYS,
    otlpEndpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT,
    logLevel: e.LOG_LEVEL,
    login:
      e.LOGIN_OIDC_ISSUER && e.LOGIN_OIDC_CLIENT_ID && e.LOGIN_OIDC_CLIENT_SECRET
        ? {
            issuer: e.LOGIN_OIDC_ISSUER,
            clientId: e.LOGIN_OIDC_CLIENT_ID,
            clientSecret: e.LOGIN_OIDC_CLIENT_SECRET,
          }
        : undefined,
    cimdAllowHttpLoopback: e.CIMD_ALLOW_HTTP_LOOPBACK === '1',
  });
}
