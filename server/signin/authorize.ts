import { NO_CONTROL_CHARACTERS } from '../../shared/ids.ts';
import { isKnownScope, SCOPE } from '../auth/scopes.ts';
import type { Clock } from '../clock.ts';
import type { PrismaClient } from '../db/generated/client.ts';
import { newId } from '../ids.ts';
import { redirectWith } from '../oauth/redirect.ts';
import type { SigninClientInfo, SigninClients } from './clients.ts';
import { type OAuthError, oauthError } from './oauth-error.ts';
import { mcpResource } from './paths.ts';
import { matchesRedirectUri } from './redirect-uris.ts';

/**
 * GET /oauth2/authorize (docs/reference.md "MCP sign-in"; RFC 6749 §4.1.1, OAuth 2.1, RFC 7636,
 * RFC 8707, RFC 9207). The checks, in the order that decides where an error goes: the client and
 * its redirect URI first (an error there is shown, never redirected: the URI is not trusted yet),
 * then everything else, whose errors go to the redirect URI with `state` and `iss`.
 */

/** A consent request lives as long as an end-user OAuth state (10 minutes). */
export const REQUEST_TTL_MS = 10 * 60 * 1000;
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const SINGLE = [
  'client_id',
  'redirect_uri',
  'response_type',
  'code_challenge',
  'code_challenge_method',
  'state',
  'scope',
  'resource',
];

export type AuthorizeCheck =
  /** Shown to the person (400): no trusted place to send them. */
  | { kind: 'refused'; error: OAuthError }
  /** An error for the client, at its redirect URI. */
  | { kind: 'redirect'; location: string }
  | { kind: 'pending'; requestId: string; client: SigninClientInfo };

/** The redirect back to the client: `params` plus its `state` (when it sent one) and our `iss`. */
export function clientRedirect(
  redirectUri: string,
  params: Record<string, string>,
  state: string | null | undefined,
  issuer: string,
): string {
  return redirectWith(redirectUri, { ...params, ...(state ? { state } : {}), iss: issuer });
}

/**
 * The scopes granted for what was asked: `tools:execute` and `tools:execute:<appId>` are kept,
 * anything else (an OIDC `openid`, `offline_access`…) is ignored, as RFC 6749 §3.3 lets a server
 * grant less; nothing usable asked means `tools:execute`.
 */
export function grantedScopes(scope: string | null): string[] {
  const asked = (scope ?? '').split(' ').filter((item) => item.length > 0);
  const kept = asked.filter(
    (item) =>
      isKnownScope(item) && (item === SCOPE.toolsExecute || item.startsWith(`${SCOPE.toolsExecute}:`)),
  );
  return kept.length > 0 ? [...new Set(kept)] : [SCOPE.toolsExecute];
}

export async function checkAuthorize(
  clients: SigninClients,
  prisma: PrismaClient,
  clock: Clock,
  issuer: string,
  query: URLSearchParams,
): Promise<AuthorizeCheck> {
  const clientIds = query.getAll('client_id');
  const clientId = clientIds[0];
  if (clientIds.length !== 1 || !clientId)
    return { kind: 'refused', error: oauthError('invalid_request', 'client_id is required, once.') };
  const client = await clients.resolve(clientId);
  if (!client.ok) return { kind: 'refused', error: client.error };
  const redirectUris = query.getAll('redirect_uri');
  const redirectUri = redirectUris[0];
  if (
    redirectUris.length !== 1 ||
    !redirectUri ||
    !matchesRedirectUri(client.value.redirectUris, redirectUri)
  )
    return {
      kind: 'refused',
      error: oauthError(
        'invalid_request',
        'redirect_uri must be one of the redirect URIs registered for this client.',
      ),
    };

  const state = query.get('state');
  const fail = (error: OAuthError['error'], description: string): AuthorizeCheck => ({
    kind: 'redirect',
    location: clientRedirect(
      redirectUri,
      { error, error_description: description },
      state !== null && state.length <= 1_024 && NO_CONTROL_CHARACTERS.test(state) ? state : undefined,
      issuer,
    ),
  });
  const repeated = SINGLE.find((name) => query.getAll(name).length > 1);
  if (repeated) return fail('invalid_request', `${repeated} must not be repeated.`);
  if (state !== null && (state.length > 1_024 || !NO_CONTROL_CHARACTERS.test(state)))
    return fail('invalid_request', 'state must be at most 1024 characters without control characters.');
  if (query.get('response_type') !== 'code')
    return fail('unsupported_response_type', 'response_type must be code.');
  const challenge = query.get('code_challenge');
  if (!challenge || !CHALLENGE.test(challenge))
    return fail('invalid_request', 'code_challenge is required: the S256 challenge of a PKCE verifier.');
  if (query.get('code_challenge_method') !== 'S256')
    return fail('invalid_request', 'code_challenge_method must be S256.');
  const resource = query.get('resource');
  if (resource !== null && resource !== mcpResource(issuer))
    return fail('invalid_target', `resource must be ${mcpResource(issuer)}.`);

  const now = clock.now();
  const requestId = newId('signinRequest');
  await prisma.signinRequest.create({
    data: {
      id: requestId,
      clientId: client.value.clientId,
      redirectUri,
      state,
      codeChallenge: challenge,
      scopes: grantedScopes(query.get('scope')),
      expiresAt: new Date(now + REQUEST_TTL_MS),
      createdAt: new Date(now),
    },
    select: { id: true },
  });
  return { kind: 'pending', requestId, client: client.value };
}
