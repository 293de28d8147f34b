import * as oidc from 'openid-client';
import { apiError, type ErrorBody } from '../../shared/errors.ts';
import type { InitiateOAuthAnswer, InitiateOAuthInput } from '../../shared/schemas/oauth.ts';
import { isRegisteredRedirectUri } from '../admin/redirect-uris.ts';
import { LIMITS } from '../config.ts';
import type { AppDeps } from '../deps.ts';
import { err, ok, type Result } from '../result.ts';
import { isOAuthApp, type OAuthApp, providerConfiguration, resourceParameters } from './provider.ts';
import { callbackUrl, hashState, verifierContext } from './state.ts';

export type InitiateOutcome = Result<InitiateOAuthAnswer, ErrorBody>;

/** Parameters of the authorization request that the registration's `extraAuthParams` cannot override. */
const RESERVED = new Set([
  'response_type',
  'client_id',
  'redirect_uri',
  'scope',
  'state',
  'code_challenge',
  'resource',
  'code_challenge_method',
]);

/**
 * POST /initiateOAuth (docs/reference.md "End-user OAuth"): a fresh state (256 random bits) bound to (client, user, app,
 * clientRedirectUri, PKCE verifier), stored hashed with the verifier sealed, and the provider's
 * authorization URL carrying it. Checks: app exists → app uses OAuth → redirect URI registered.
 *
 * @see https://www.rfc-editor.org/rfc/rfc7636 (PKCE, S256)
 */
export async function initiateOAuth(
  deps: AppDeps,
  clientId: string,
  input: InitiateOAuthInput,
): Promise<InitiateOutcome> {
  const app = await deps.apps.get(input.appId);
  if (!app) {
    return err(apiError('app_not_found', `No app ${input.appId} is registered.`, { app_id: input.appId }));
  }
  if (!isOAuthApp(app)) {
    const message = `App ${app.appId} does not use OAuth; its tools need no user authorization.`;
    return err(apiError('invalid_request', message, { issues: [{ path: '/appId', message }] }));
  }
  if (!(await isRegisteredRedirectUri(deps.db.prisma, clientId, input.clientRedirectUri))) {
    return err(apiError('redirect_uri_mismatch', 'clientRedirectUri is not registered on this client.'));
  }

  return ok(await startAuthorization(deps, clientId, input.userId, app, input.clientRedirectUri));
}

/**
 * Starts one authorization of `userId` (of `clientId`) for `app`: a fresh state (256 random bits)
 * bound to (client, user, app, redirect URI, PKCE verifier), stored hashed with the verifier
 * sealed, and the provider's authorization URL carrying it. `redirectUri` null: a flow started from
 * MCP, whose callback ends on /oauth/complete.
 */
export async function startAuthorization(
  deps: AppDeps,
  clientId: string,
  userId: string,
  app: OAuthApp,
  redirectUri: string | null,
): Promise<InitiateOAuthAnswer> {
  const state = oidc.randomState();
  const verifier = oidc.randomPKCECodeVerifier();
  const stateHash = hashState(state);
  const now = deps.clock.now();
  const expiresAt = new Date(now + LIMITS.oauthStateTtlMs);
  const sealedVerifier = await deps.envelope.seal(verifier, verifierContext(stateHash));
  await deps.states.create(
    {
      stateHash,
      clientId,
      userId,
      appId: app.appId,
      redirectUri,
      verifier: new Uint8Array(sealedVerifier),
      expiresAt,
    },
    now,
  );

  const parameters: Record<string, string> = {};
  for (const [name, value] of Object.entries(app.auth.extraAuthParams ?? {})) {
    if (!RESERVED.has(name)) parameters[name] = value;
  }
  Object.assign(parameters, {
    response_type: 'code',
    redirect_uri: callbackUrl(deps.config.publicUrl),
    ...(app.auth.scopes.length > 0 ? { scope: app.auth.scopes.join(' ') } : {}),
    state,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    ...resourceParameters(app.auth),
  });
  const url = oidc.buildAuthorizationUrl(providerConfiguration(app.auth, null), parameters);
  return { authorizationUrl: url.href, state, expires_at: expiresAt.toISOString() };
}
