import * as oidc from 'openid-client';
import type { Logger } from 'pino';
import { apiError, type ErrorBody } from '../../shared/errors.ts';
import { isRegisteredRedirectUri } from '../admin/redirect-uris.ts';
import type { AppDeps } from '../deps.ts';
import { err, ok, type Result } from '../result.ts';
import { auditConnection, expiryFrom, saveGrant } from './grants.ts';
import { callProvider, isOAuthApp, parseScope, resourceParameters } from './provider.ts';
import { redirectWith } from './redirect.ts';
import { callbackUrl, completePageUrl, verifierContext } from './state.ts';

/**
 * What GET /handleOAuthCallback answers: the location of a 302 (the client's registered URI, or the
 * server's own page for a flow started from MCP, with `status` added), or — when there is no
 * trusted place to send the browser — the 400 `state_invalid` body.
 */
export type CallbackOutcome = Result<string, ErrorBody>;

/**
 * `reason` values of a failed callback. The contract fixes `state_invalid`, `access_denied`,
 * `code_exchange_failed` and passes other provider `error` codes on; `issuer_mismatch` (RFC 9207
 * `iss` of another server) and `server_error` (our own failure after the state was claimed) are ours.
 */
export type CallbackFailure = 'state_invalid' | 'code_exchange_failed' | 'issuer_mismatch' | 'server_error';

/** The outcome of a callback that stored the grant (any other is its failure's reason). */
const SUCCESS = 'success';

/** How a callback of a flow started from MCP records its outcome (see `finish`). */
type Recording = 'set' | 'if-unset' | 'keep';

/** A provider's `error` passed on as `reason` only if it looks like an RFC 6749 error code. */
const PROVIDER_ERROR = /^[a-z][a-z0-9_.-]{0,63}$/i;
/** Longer than any state we issue by far; a longer value is not ours and is not hashed. */
const MAX_STATE_LENGTH = 512;

function invalidState(): CallbackOutcome {
  return err(
    apiError('state_invalid', 'The state is missing or unknown; the authorization cannot continue.'),
  );
}

/**
 * The provider's redirect back (docs/reference.md "End-user OAuth"). In order: state known (else 400) → state fresh and
 * unused, claimed by one conditional UPDATE so that of concurrent callbacks only one goes on → a
 * wrong `iss` → provider `error` → a missing `iss` where one is promised → code exchange with the PKCE verifier → grant sealed and stored → 302.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9700#section-4.4 (mix-up), https://www.rfc-editor.org/rfc/rfc9207
 */
export async function handleOAuthCallback(
  deps: AppDeps,
  query: URLSearchParams,
  log: Logger,
): Promise<CallbackOutcome> {
  const { prisma } = deps.db;
  const states = query.getAll('state');
  const state = states[0];
  if (states.length !== 1 || !state || state.length > MAX_STATE_LENGTH) return invalidState();
  const row = await deps.states.find(state);
  if (!row) return invalidState();
  // The URI was registered at initiation; one removed since is no longer a trusted place.
  if (row.redirectUri !== null && !(await isRegisteredRedirectUri(prisma, row.clientId, row.redirectUri)))
    return invalidState();
  const { redirectUri } = row;

  /**
   * Where the browser goes: the client's URI with the outcome in its query, or — for a flow started
   * from MCP, which has none — the server's own page, which reads the outcome recorded here by the
   * flow's id (docs/reference.md "Other paths"), so that page never shows what a URL says.
   * `record`: `if-unset` records only when no callback did before (a late one for an expired
   * state); `keep` leaves the outcome of the callback that used the state (it may still be running).
   */
  const finish = async (outcome: string, record: Recording = 'set'): Promise<CallbackOutcome> => {
    if (redirectUri !== null) {
      const params: Record<string, string> =
        outcome === SUCCESS ? { status: 'success' } : { status: 'error', reason: outcome };
      return ok(redirectWith(redirectUri, params));
    }
    if (record !== 'keep') {
      try {
        await deps.states.recordOutcome(row.id, outcome, record === 'if-unset');
      } catch (error) {
        // The page then says the flow has not finished; a grant, if any, is stored all the same.
        log.warn({ err: error, appId: row.appId }, 'oauth callback could not record the outcome');
      }
    }
    return ok(completePageUrl(deps.config.publicUrl, row.id));
  };
  const fail = (reason: string, record?: Recording): Promise<CallbackOutcome> => {
    log.info({ appId: row.appId, reason }, 'oauth callback failed');
    return finish(reason, record);
  };

  // Single use across processes: of concurrent callbacks, only the one that claims the state goes on.
  const claimed = await deps.states.claim(row, deps.clock.now());
  if (!claimed.ok) return fail('state_invalid', claimed.error === 'used' ? 'keep' : 'if-unset');

  const app = await deps.apps.get(row.appId);
  if (!app || !isOAuthApp(app)) return fail('server_error');
  // RFC 9207: an `iss` from another server, or none where this server promises one, is a mix-up.
  // A missing one matters only to a response that carries a code (the mix-up sends a code to the
  // wrong token endpoint): a provider's `error` without `iss` is passed on as the contract says,
  // the state being spent either way.
  const iss = query.get('iss');
  if (iss !== null && !deps.issuers.accepts(app.auth, iss)) return fail('issuer_mismatch');

  const providerError = query.get('error');
  if (providerError !== null) {
    return fail(PROVIDER_ERROR.test(providerError) ? providerError : 'code_exchange_failed');
  }
  if (iss === null && (await deps.issuers.requiresIss(app.auth))) return fail('issuer_mismatch');
  const code = query.get('code');
  if (!code) return fail('code_exchange_failed');

  try {
    const verifier = await deps.envelope.openString(
      Buffer.from(row.verifier),
      verifierContext(row.stateHash),
    );
    // openid-client derives redirect_uri from this URL; `iss` was checked above, against the
    // registration rather than a discovered issuer, so it is not handed on.
    const current = new URL(callbackUrl(deps.config.publicUrl));
    current.searchParams.set('code', code);
    current.searchParams.set('state', state);
    const exchanged = await callProvider(app, deps.config.upstreamTimeoutMs, (config) =>
      oidc.authorizationCodeGrant(
        config,
        current,
        { pkceCodeVerifier: verifier, expectedState: state },
        resourceParameters(app.auth),
      ),
    );
    if (!exchanged.ok) {
      const failure = exchanged.error;
      log.warn(
        {
          appId: app.appId,
          failure: failure.kind,
          ...(failure.kind === 'oauth_error' ? { oauthError: failure.error } : {}),
          ...('status' in failure ? { status: failure.status } : {}),
        },
        'oauth code exchange failed',
      );
      return fail('code_exchange_failed');
    }
    const tokens = exchanged.value;
    const receivedAt = deps.clock.now();
    const scopes = parseScope(tokens.scope, app.auth.scopes);
    const grantKey = { clientId: row.clientId, userId: row.userId, appId: row.appId };
    const id = await saveGrant(
      prisma,
      deps.envelope,
      grantKey,
      {
        tokens: { access_token: tokens.access_token, refresh_token: tokens.refresh_token },
        scopes,
        expiresAt: expiryFrom(tokens.expires_in, receivedAt),
      },
      new Date(receivedAt),
    );
    // The end user's consent at the provider made it: no key of ours acted, so the server records it.
    await prisma.$transaction((tx) =>
      auditConnection(tx, deps.clock, 'system', 'connection.granted', id, grantKey, { scopes }),
    );
  } catch (error) {
    log.error({ err: error, appId: app.appId }, 'oauth callback could not store the grant');
    return fail('server_error');
  }
  log.info({ appId: app.appId }, 'oauth grant stored');
  return finish(SUCCESS);
}
