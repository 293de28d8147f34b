import * as oidc from 'openid-client';
import type { PublicAuth } from '../../shared/schemas/apps.ts';
import type { LoadedApp } from '../apps/registry.ts';
import { Redactor } from '../calls/redact.ts';
import { failureCode } from '../calls/unreachable.ts';
import { excerpt } from '../excerpt.ts';
import { err, ok, type Result } from '../result.ts';

/** The auth block of an oauth2 app, as the registry holds it (the client secret apart). */
export type OAuthAuth = Extract<PublicAuth, { type: 'oauth2' }>;

/** A loaded app whose auth is oauth2. */
export type OAuthApp = LoadedApp & { auth: OAuthAuth };

export function isOAuthApp(app: LoadedApp): app is OAuthApp {
  return app.auth.type === 'oauth2';
}

/**
 * Why a request to the provider failed:
 * - `oauth_error`: a 4xx answer with an RFC 6749 §5.2 error code (`invalid_grant`, …);
 * - `http_error`: any other answer that is not a usable token response (5xx, HTML, bad JSON);
 * - `unreachable` / `timeout`: no answer at all.
 * `status` and `body` are the provider's, for the 502 the contract asks for; never logged.
 */
export type ProviderFailure =
  | { kind: 'oauth_error'; error: string; status: number; body: string }
  | { kind: 'http_error'; status: number; body: string }
  /** `code`: the connection failure's code (calls/unreachable.ts `failureCode`). */
  | { kind: 'unreachable'; code: string }
  | { kind: 'timeout' };

export type ProviderOutcome<T> = Result<T, ProviderFailure>;

/**
 * The issuer we tell openid-client. Registrations carry endpoints, not an issuer, and we never
 * discover; the origin of the authorization endpoint stands in for it (see `issuerMatches`).
 */
export function nominalIssuer(auth: OAuthAuth): string {
  return new URL(auth.authorizationUrl).origin;
}

/**
 * RFC 9207 mix-up defence without discovery: an `iss` in the authorization response must name
 * the server the request went to. Registrations do not name an issuer, so we require the same
 * origin as the authorization endpoint; a response relayed from another server fails.
 */
export function issuerMatches(auth: OAuthAuth, iss: string): boolean {
  try {
    return new URL(iss).origin === nominalIssuer(auth);
  } catch {
    return false;
  }
}

/** openid-client's view of the app's provider: explicit endpoints, no discovery. */
export function providerConfiguration(
  auth: OAuthAuth,
  clientSecret: string | null,
  fetchImpl?: oidc.CustomFetch,
): oidc.Configuration {
  const server: oidc.ServerMetadata = {
    issuer: nominalIssuer(auth),
    authorization_endpoint: auth.authorizationUrl,
    token_endpoint: auth.tokenUrl,
    ...(auth.revocationUrl ? { revocation_endpoint: auth.revocationUrl } : {}),
  };
  const secret = clientSecret ?? undefined;
  const clientAuth =
    auth.tokenAuthMethod === 'none'
      ? oidc.None()
      : auth.tokenAuthMethod === 'client_secret_post'
        ? oidc.ClientSecretPost(secret)
        : oidc.ClientSecretBasic(secret);
  const config = new oidc.Configuration(server, auth.clientId, undefined, clientAuth);
  // The admin registered these URLs; plain http is theirs to choose (loopback providers, tests).
  if ([auth.tokenUrl, auth.revocationUrl].some((url) => url?.startsWith('http:'))) {
    oidc.allowInsecureRequests(config);
  }
  if (fetchImpl) {
    config[oidc.customFetch] = fetchImpl;
    // Our fetch owns the time-out, so it can tell a time-out from a refused connection.
    config.timeout = 0;
  }
  return config;
}

/**
 * Runs one back-channel request to the app's provider (code exchange, refresh, revocation) and
 * classifies its failure. The last answer is captured beside openid-client, so a failure can
 * carry the provider's status and body whatever openid-client made of them.
 */
export async function callProvider<T>(
  app: OAuthApp,
  timeoutMs: number,
  request: (config: oidc.Configuration) => Promise<T>,
): Promise<ProviderOutcome<T>> {
  const signal = AbortSignal.timeout(timeoutMs);
  const clientSecret = await app.secret();
  let answered: { status: number; body: string } | undefined;
  let failed: unknown;
  const fetchImpl: oidc.CustomFetch = async (url, options) => {
    const response = await fetch(url, { ...options, signal } as RequestInit).catch((error: unknown) => {
      failed = error;
      throw error;
    });
    const bytes = Buffer.from(await response.arrayBuffer());
    // The body may become a 502's `upstream_body`: nothing we just sent may come back in it.
    const written = new Redactor(writtenSecrets(options, clientSecret));
    answered = { status: response.status, body: written.excerpt(excerpt(bytes)) };
    const headers = new Headers(response.headers);
    headers.delete('content-length');
    headers.delete('content-encoding');
    return new Response(withoutIdToken(bytes, headers.get('content-type')), {
      status: response.status,
      statusText: response.statusText,
      headers,
    });
  };
  const config = providerConfiguration(app.auth, clientSecret, fetchImpl);
  try {
    return ok(await request(config));
  } catch (error) {
    if (!answered) {
      return err(signal.aborted ? { kind: 'timeout' } : { kind: 'unreachable', code: failureCode(failed) });
    }
    const { status, body } = answered;
    if (error instanceof oidc.ResponseBodyError && status >= 400 && status < 500) {
      return err({ kind: 'oauth_error', error: error.error, status, body });
    }
    return err({ kind: 'http_error', status, body });
  }
}

/** Form parameters of a token or revocation request that carry a secret. */
const SECRET_PARAMETERS = [
  'client_secret',
  'refresh_token',
  'code',
  'code_verifier',
  'token',
  'client_assertion',
];

/**
 * The secrets one request to the provider carried, as written: the client secret, the Basic
 * credential (its base64 text, and the form-encoded `id:secret` inside it, which a provider may
 * echo decoded), and the secret parameters of the form body (refresh token, code, verifier, the
 * token being revoked). Redactor adds each one's other encodings.
 */
function writtenSecrets(options: oidc.CustomFetchOptions, clientSecret: string | null): string[] {
  const secrets = clientSecret ? [clientSecret] : [];
  const basic = /^Basic\s+(\S+)$/i.exec(options.headers.authorization ?? '')?.[1];
  if (basic) {
    const pair = Buffer.from(basic, 'base64').toString('utf8');
    secrets.push(basic, pair, pair.slice(pair.indexOf(':') + 1));
  }
  const body = options.body;
  const form =
    body instanceof URLSearchParams ? body : typeof body === 'string' ? new URLSearchParams(body) : null;
  for (const name of SECRET_PARAMETERS) {
    for (const value of form?.getAll(name) ?? []) secrets.push(value);
  }
  return secrets;
}

/**
 * We call APIs for the user and never consume an ID token. A provider that adds one (scope
 * `openid`) would have openid-client validate it against an issuer we only approximate (no
 * discovery), failing a good token response; so it is dropped before openid-client reads it.
 */
function withoutIdToken(bytes: Buffer, contentType: string | null): Buffer | string {
  if (!contentType?.toLowerCase().includes('json')) return bytes;
  try {
    const parsed: unknown = JSON.parse(bytes.toString('utf8'));
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed) && 'id_token' in parsed) {
      const { id_token: _dropped, ...rest } = parsed as Record<string, unknown>;
      return JSON.stringify(rest);
    }
  } catch {}
  return bytes;
}

/** Splits an RFC 6749 `scope` value; an absent one means "as requested" (§5.1). */
export function parseScope(scope: string | undefined, requested: readonly string[]): string[] {
  const scopes = scope === undefined ? requested : scope.split(' ').filter((s) => s.length > 0);
  return [...new Set(scopes)].sort();
}

/**
 * RFC 8707 `resource` for the token endpoint: an app from an MCP server asks for tokens for that
 * server (MCP authorization), in the code exchange and in every refresh.
 */
export function resourceParameters(auth: OAuthAuth): Record<string, string> {
  return auth.resource !== undefined ? { resource: auth.resource } : {};
}
