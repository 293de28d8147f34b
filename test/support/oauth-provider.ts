/**
 * A real OAuth 2.0 authorization server for tests: oidc-provider on 127.0.0.1, speaking the
 * authorization code grant with PKCE (required), refresh tokens with rotation, revocation and
 * opaque access tokens of a short life. Consent runs without a browser: `authorize()` plays the
 * user agent (following redirects with a cookie jar), and the interaction route approves (or
 * denies) at once for the account it names.
 *
 * It records what a secret scan needs (every token, code and verifier it saw) and counts
 * token-endpoint requests by grant type, so a test can assert "exactly one refresh".
 *
 * @example
 * const provider = await startOAuthProvider({ redirectUri: 'http://toolgate.test/handleOAuthCallback' });
 * upstream.setTokenCheck((token) => provider.isAccessTokenValid(token));
 * const callback = await provider.authorize(authorizationUrl, { account: 'alice' });
 * await fetch(`${server.url}/handleOAuthCallback${callback.search}`, { redirect: 'manual' });
 * expect(provider.counts.refresh_token).toBe(0);
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export interface OAuthProviderOptions {
  /** The redirect URI registered for the client (toolgate's `{PUBLIC_URL}/handleOAuthCallback`). */
  redirectUri: string;
  /** Access-token life in seconds (default 300). */
  accessTokenTtl?: number;
  /** Scopes the resource server knows (default `profile:read notes:write`). */
  scopes?: string[];
  clientId?: string;
  clientSecret?: string;
  tokenAuthMethod?: 'client_secret_basic' | 'client_secret_post';
  /** Issue refresh tokens at all (default true). */
  issueRefreshTokens?: boolean;
  /**
   * Issue a new refresh token on each refresh (default true). false: the refresh token stays the
   * same and refresh answers omit it, as some providers (e.g. Google) answer.
   */
  rotateRefreshTokens?: boolean;
  /** Dynamic client registration (RFC 7591) at `/reg`, open to anyone (default false). */
  registration?: boolean;
}

export interface AuthorizeOptions {
  /** The account that signs in (default `alice`). */
  account?: string;
  /** Deny consent: the provider redirects with `error=access_denied`. */
  deny?: boolean;
}

export interface OAuthProviderFixture {
  issuer: string;
  authorizationUrl: string;
  tokenUrl: string;
  revocationUrl: string;
  clientId: string;
  clientSecret: string;
  /** The `auth` of an app registration that uses this provider (docs/reference.md "Administration"). */
  appAuth(scopes?: string[]): {
    type: 'oauth2';
    authorizationUrl: string;
    tokenUrl: string;
    revocationUrl: string;
    clientId: string;
    clientSecret: string;
    scopes: string[];
  };
  /** Token-endpoint requests by grant type (counted whatever the answer), plus revocations. */
  counts: { authorization_code: number; refresh_token: number; revocation: number };
  /** Every token, code and PKCE verifier the provider issued or received, for secret scans. */
  secrets(): string[];
  /** The upstream's token check: an access token this provider issued, unexpired and not revoked. */
  isAccessTokenValid(token: string): Promise<boolean>;
  /** The account a valid access token was issued for (undefined: unknown, expired or revoked). */
  accountOf(token: string): Promise<string | undefined>;
  /** Plays the user agent from the authorization URL to the redirect back to the client. */
  authorize(authorizationUrl: string, options?: AuthorizeOptions): Promise<URL>;
  /** The user revokes access at the provider: their grants (all, without `account`) and tokens are destroyed. */
  revokeGrants(account?: string): Promise<void>;
  /** The access tokens issued so far (to `account`) stop working; refresh tokens keep working. */
  revokeAccessTokens(account?: string): Promise<void>;
  /**
   * The next `count` token-endpoint requests answer `status` (default 503) with the RFC 6749 §5.2
   * `error` code given (default `temporarily_unavailable`), without being processed.
   */
  failTokenEndpoint(count: number, status?: number, error?: string): void;
  /** The token endpoint answers after `ms` milliseconds (0: at once). */
  delayTokenEndpoint(ms: number): void;
  /**
   * The token endpoint does its work at once (a refresh rotates the refresh token) but sends its
   * answer `ms` milliseconds later, whether the caller still waits or not (0: at once).
   */
  delayTokenAnswer(ms: number): void;
  /** Refresh answers leave out `scope` (RFC 6749 §5.1 allows it when the scope is unchanged). */
  omitScopeFromRefreshes(omit: boolean): void;
  close(): Promise<void>;
}

const RESOURCE = 'urn:toolgate:test-upstream';

export async function startOAuthProvider(options: OAuthProviderOptions): Promise<OAuthProviderFixture> {
  const clientId = options.clientId ?? 'toolgate-test-client';
  const clientSecret = options.clientSecret ?? 'toolgate-test-client-secret-0123456789';
  const scopes = options.scopes ?? ['profile:read', 'notes:write'];
  const counts = { authorization_code: 0, refresh_token: 0, revocation: 0 };
  const seen = new Set<string>();
  /** grant id → account, for revoking one user's grants. */
  const grants = new Map<string, string>();
  let failures = { remaining: 0, status: 503, error: 'temporarily_unavailable' };
  let delayMs = 0;
  let answerDelayMs = 0;
  let omitRefreshScope = false;

  // The port first: the issuer is part of the configuration.
  const http: Server = createServer();
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(0, '127.0.0.1', resolve);
  });
  const issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [options.redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: options.tokenAuthMethod ?? 'client_secret_basic',
      },
    ],
    cookies: { keys: ['toolgate-test-cookie-key'] },
    findAccount: (_ctx: unknown, id: string) => ({ accountId: id, claims: () => ({ sub: id }) }),
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    pkce: { required: () => true },
    scopes: ['openid', 'offline_access', ...scopes],
    issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) =>
      options.issueRefreshTokens !== false && client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: options.rotateRefreshTokens ?? true,
    ttl: {
      AccessToken: options.accessTokenTtl ?? 300,
      AuthorizationCode: 60,
      Grant: 3600,
      Interaction: 600,
      RefreshToken: 3600,
      Session: 3600,
    },
    features: {
      devInteractions: { enabled: false },
      revocation: { enabled: true, allowedPolicy: () => true },
      registration: { enabled: options.registration === true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: scopes.join(' '),
          accessTokenFormat: 'opaque',
          accessTokenTTL: options.accessTokenTtl ?? 300,
        }),
      },
    },
  });
  provider.on('server_error', (_ctx: unknown, error: Error) => {
    console.error('oauth provider fixture: server_error', error);
  });

  /** access token → account, for revoking one user's access tokens alone. */
  const accessTokens = new Map<string, string>();
  for (const event of ['access_token.saved', 'refresh_token.saved', 'authorization_code.saved']) {
    provider.on(event, (token: { jti: string; accountId?: string }) => {
      seen.add(token.jti);
      if (event === 'access_token.saved') accessTokens.set(token.jti, token.accountId ?? '');
    });
  }

  provider.use(async (ctx, next) => {
    // Consent without a browser: approve (or deny) the pending prompt for the named account.
    if (ctx.method === 'GET' && ctx.path.startsWith('/interaction/')) {
      const details = await provider.interactionDetails(ctx.req, ctx.res);
      const account = ctx.query.account ? String(ctx.query.account) : 'alice';
      let result: Record<string, unknown>;
      if (ctx.query.deny === '1') {
        result = { error: 'access_denied', error_description: 'The user said no.' };
      } else if (details.prompt.name === 'login') {
        result = { login: { accountId: account } };
      } else {
        const grant = details.grantId
          ? ((await provider.Grant.find(details.grantId)) as InstanceType<typeof provider.Grant>)
          : new provider.Grant({
              accountId: details.session?.accountId as string,
              // The client of this flow: the fixture's own, or one registered dynamically.
              clientId: String(details.params.client_id ?? clientId),
            });
        const missing = details.prompt.details as {
          missingOIDCScope?: string[];
          missingResourceScopes?: Record<string, string[]>;
        };
        if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
        for (const [resource, wanted] of Object.entries(missing.missingResourceScopes ?? {})) {
          grant.addResourceScope(resource, wanted.join(' '));
        }
        const grantId = await grant.save();
        grants.set(grantId, details.session?.accountId as string);
        result = { consent: { grantId } };
      }
      const returnTo = await provider.interactionResult(ctx.req, ctx.res, result, {
        mergeWithLastSubmission: true,
      });
      ctx.status = 303;
      ctx.redirect(returnTo);
      return;
    }
    if (ctx.method === 'POST' && ctx.path === '/token') {
      if (delayMs > 0) {
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        // The caller gave up: this provider does not act on a request nobody waits for.
        if (ctx.req.destroyed || ctx.res.destroyed) return;
      }
      if (failures.remaining > 0) {
        failures.remaining -= 1;
        ctx.status = failures.status;
        ctx.type = 'application/json';
        ctx.body = JSON.stringify({ error: failures.error, note: 'injected by the test' });
        return;
      }
      await next();
      const params = (ctx as unknown as { oidc?: { params?: Record<string, unknown> } }).oidc?.params;
      const grantType = params?.grant_type;
      if (grantType === 'authorization_code' || grantType === 'refresh_token') counts[grantType] += 1;
      if (grantType === 'refresh_token' && options.rotateRefreshTokens === false && ctx.status === 200) {
        delete (ctx.body as { refresh_token?: string }).refresh_token;
      }
      if (grantType === 'refresh_token' && omitRefreshScope && ctx.status === 200) {
        delete (ctx.body as { scope?: string }).scope;
      }
      if (typeof params?.code_verifier === 'string') seen.add(params.code_verifier);
      if (typeof params?.code === 'string') seen.add(params.code);
      if (typeof params?.refresh_token === 'string') seen.add(params.refresh_token);
      if (answerDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, answerDelayMs));
      return;
    }
    if (ctx.method === 'POST' && ctx.path === '/token/revocation') counts.revocation += 1;
    await next();
  });

  http.on('request', provider.callback());
  const grantsOf = (account?: string) =>
    [...grants].filter(([, owner]) => account === undefined || owner === account).map(([grantId]) => grantId);

  return {
    issuer,
    authorizationUrl: `${issuer}/auth`,
    tokenUrl: `${issuer}/token`,
    revocationUrl: `${issuer}/token/revocation`,
    clientId,
    clientSecret,
    appAuth: (scopes = ['profile:read']) => ({
      type: 'oauth2',
      authorizationUrl: `${issuer}/auth`,
      tokenUrl: `${issuer}/token`,
      revocationUrl: `${issuer}/token/revocation`,
      clientId,
      clientSecret,
      scopes,
    }),
    counts,
    secrets: () => [...seen, clientSecret],
    isAccessTokenValid: async (token) => {
      const found = await provider.AccessToken.find(token);
      return Boolean(found?.isValid);
    },
    accountOf: async (token) => {
      const found = await provider.AccessToken.find(token);
      return found?.isValid ? found.accountId : undefined;
    },
    authorize: (authorizationUrl, authorizeOptions = {}) =>
      userAgent(issuer, authorizationUrl, authorizeOptions),
    revokeGrants: async (account) => {
      for (const grantId of grantsOf(account)) {
        await Promise.all([
          provider.AccessToken.revokeByGrantId(grantId),
          provider.RefreshToken.revokeByGrantId(grantId),
          provider.AuthorizationCode.revokeByGrantId(grantId),
          provider.Grant.adapter.destroy(grantId),
        ]);
      }
    },
    revokeAccessTokens: async (account) => {
      // Not revokeByGrantId: the memory adapter's index would take the refresh tokens along.
      for (const [token, owner] of accessTokens) {
        if (account === undefined || owner === account) await provider.AccessToken.adapter.destroy(token);
      }
    },
    failTokenEndpoint: (count, status = 503, error = 'temporarily_unavailable') => {
      failures = { remaining: count, status, error };
    },
    delayTokenEndpoint: (ms) => {
      delayMs = ms;
    },
    delayTokenAnswer: (ms) => {
      answerDelayMs = ms;
    },
    omitScopeFromRefreshes: (omit) => {
      omitRefreshScope = omit;
    },
    close: () =>
      new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}

/** Follows the provider's redirects (keeping its cookies) until it sends the browser elsewhere. */
async function userAgent(issuer: string, start: string, options: AuthorizeOptions): Promise<URL> {
  const jar = new Map<string, string>();
  let url = new URL(start);
  for (let hop = 0; hop < 10; hop += 1) {
    const response = await fetch(url, {
      redirect: 'manual',
      headers: { cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; ') },
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';', 1);
      const at = pair.indexOf('=');
      const name = pair.slice(0, at);
      const value = pair.slice(at + 1);
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') jar.delete(name);
      else jar.set(name, value);
    }
    await response.arrayBuffer();
    const location = response.headers.get('location');
    if (!location)
      throw new Error(`provider answered ${response.status} without a redirect at ${url.pathname}`);
    const next = new URL(location, url);
    if (next.origin !== issuer) return next;
    if (next.pathname.startsWith('/interaction/')) {
      next.searchParams.set('account', options.account ?? 'alice');
      if (options.deny) next.searchParams.set('deny', '1');
    }
    url = next;
  }
  throw new Error('too many redirects at the provider');
}
