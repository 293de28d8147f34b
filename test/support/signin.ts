/**
 * The world of MCP sign-in tests: the end-user OAuth harness (toolgate with the oauth2 app `demo`,
 * its provider and upstream) on a real PUBLIC_URL, with sign-in turned on against a second
 * oidc-provider acting as the operator's login provider (LOGIN_OIDC_*), and a browser per person.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { type Harness, startHarness } from '../oauth/harness.ts';
import { Browser } from './browser.ts';
import type { BackendName } from './db.ts';
import { type OAuthProviderFixture, startOAuthProvider } from './oauth-provider.ts';
import { freePort } from './ports.ts';

export interface SigninWorld {
  harness: Harness;
  login: OAuthProviderFixture;
  /** toolgate's PUBLIC_URL (its real address). */
  url: string;
  /** A browser that signs in as `account`. */
  browser(account: string): Browser;
  close(): Promise<void>;
}

export interface SigninWorldOptions {
  env?: Record<string, string>;
  /** Another server on the same database and PUBLIC_URL (postgres): listens elsewhere, shares all else. */
  share?: SigninWorld;
}

export async function startSigninWorld(
  backend: BackendName,
  options: SigninWorldOptions = {},
): Promise<SigninWorld> {
  const shared = options.share;
  const publicUrl = shared?.url ?? `http://127.0.0.1:${await freePort()}`;
  const login =
    shared?.login ??
    (await startOAuthProvider({
      redirectUri: `${publicUrl}/login/callback`,
      clientId: 'toolgate-login',
      clientSecret: 'toolgate-login-secret-0123456789',
      scopes: [],
    }));
  const port = shared ? String(await freePort()) : new URL(publicUrl).port;
  const harness = await startHarness(backend, {
    env: {
      PORT: port,
      PUBLIC_URL: publicUrl,
      LOGIN_OIDC_ISSUER: login.issuer,
      LOGIN_OIDC_CLIENT_ID: login.clientId,
      LOGIN_OIDC_CLIENT_SECRET: login.clientSecret,
      CIMD_ALLOW_HTTP_LOOPBACK: '1',
      ...options.env,
    },
    provider: { redirectUri: `${publicUrl}/handleOAuthCallback` },
    ...(shared ? { share: shared.harness } : {}),
  });
  return {
    harness,
    login,
    url: publicUrl,
    browser: (account) =>
      new Browser([new URL(harness.server.url).origin, new URL(publicUrl).origin, login.issuer], account),
    close: async () => {
      await harness.close();
      if (!shared) await login.close();
    },
  };
}

/** What an MCP client remembers between runs, in memory: the SDKs' OAuthClientProvider. */
export class MemoryOAuthProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  /** The last URL the SDK asked to open in a browser. */
  authorizationUrl: URL | undefined;
  readonly redirectUrl: string;

  constructor(
    options: { redirectUrl?: string; clientMetadataUrl?: string; client?: OAuthClientInformationMixed } = {},
  ) {
    this.redirectUrl = options.redirectUrl ?? 'http://127.0.0.1:33418/callback';
    this.client = options.client;
    if (options.clientMetadataUrl) this.clientMetadataUrl = options.clientMetadataUrl;
  }

  clientMetadataUrl?: string;

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test MCP client',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  state(): string {
    return randomBytes(16).toString('base64url');
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(client: OAuthClientInformationMixed) {
    this.client = client;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  discovered: unknown;
  saveDiscoveryState(state: unknown) {
    this.discovered = state;
  }
  discoveryState() {
    return this.discovered as never;
  }
}

/** A PKCE pair for raw protocol tests. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** The redirect URI raw protocol tests register (loopback: any port matches). */
export const TEST_REDIRECT = 'http://127.0.0.1:33418/callback';

/** POST /oauth2/register of a client with `redirectUri`; answers its client_id. */
export async function registerClient(
  url: string,
  redirectUri = TEST_REDIRECT,
  name = 'raw client',
): Promise<string> {
  const response = await fetch(new URL('/oauth2/register', url), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: name, redirect_uris: [redirectUri] }),
  });
  if (response.status !== 201) throw new Error(`register: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { client_id: string }).client_id;
}

/** The /oauth2/authorize URL a well-behaved client builds, with `extra` parameters changed. */
export function authorizeUrl(
  url: string,
  clientId: string,
  challenge: string,
  extra: Record<string, string | null> = {},
): URL {
  const target = new URL('/oauth2/authorize', url);
  const params: Record<string, string | null> = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: TEST_REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'client-state-1',
    scope: 'tools:execute',
    resource: `${url}/mcp`,
    ...extra,
  };
  for (const [name, value] of Object.entries(params))
    if (value !== null) target.searchParams.set(name, value);
  return target;
}

/** POST of a form to an /oauth2 endpoint; answers status and parsed JSON (or text). */
export async function postForm(url: string, path: string, form: Record<string, string>) {
  const response = await fetch(new URL(path, url), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {}
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers and assert them whole.
  return { status: response.status, headers: response.headers, body: body as any };
}
