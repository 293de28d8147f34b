import { createHash, randomBytes } from 'node:crypto';
import * as oidc from 'openid-client';
import type { Logger } from 'pino';
import { NO_CONTROL_CHARACTERS } from '../../shared/ids.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Envelope } from '../crypto/envelope.ts';
import type { PrismaClient } from '../db/generated/client.ts';
import { newId } from '../ids.ts';
import { err, ok, type Result } from '../result.ts';
import { SIGNIN_PATH } from './paths.ts';
import { LOGIN_TTL_S } from './session.ts';

/**
 * The person's sign-in at the OpenID Connect provider the operator names (LOGIN_OIDC_*), with
 * openid-client: discovery, the authorization code flow with PKCE (S256) and the ID token's
 * checks are the library's. What is ours: the pending sign-in lives in the database (any server
 * takes the callback), its state is stored only as a hash, its verifier sealed, and it is bound to
 * the browser that started it (a random cookie whose hash is part of the seal's context), so a
 * callback URL handed to someone else signs nobody in.
 */

export type LoginFailure = 'state_invalid' | 'denied' | 'exchange_failed' | 'no_subject';

export interface LoginStart {
  /** Where the browser goes: the provider's authorization URL. */
  location: string;
  /** The browser-binding cookie value to set (LOGIN_COOKIE). */
  binding: string;
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const MAX_SUB_LENGTH = 251; // `oidc:` + sub must fit a user id (256)

export class LoginProvider {
  #configuration: Promise<oidc.Configuration> | undefined;
  readonly #callback: string;

  constructor(
    private readonly settings: NonNullable<Config['login']>,
    publicUrl: string,
    private readonly prisma: PrismaClient,
    private readonly envelope: Envelope,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {
    this.#callback = `${publicUrl}${SIGNIN_PATH.loginCallback}`;
  }

  /** The provider's configuration, discovered once (again after a failure). */
  #config(): Promise<oidc.Configuration> {
    this.#configuration ??= oidc
      .discovery(
        new URL(this.settings.issuer),
        this.settings.clientId,
        undefined,
        oidc.ClientSecretBasic(this.settings.clientSecret),
        // The operator named this issuer; plain http is theirs to choose (a provider on loopback).
        this.settings.issuer.startsWith('http:') ? { execute: [oidc.allowInsecureRequests] } : undefined,
      )
      .catch((error: unknown) => {
        this.#configuration = undefined;
        throw error;
      });
    return this.#configuration;
  }

  /** Starts a sign-in that ends at `returnTo` (a path of this server, chosen by the server). */
  async begin(returnTo: string): Promise<LoginStart> {
    const config = await this.#config();
    const state = oidc.randomState();
    const verifier = oidc.randomPKCECodeVerifier();
    const binding = randomBytes(32).toString('base64url');
    const stateHash = sha256(state);
    const now = this.clock.now();
    const sealed = await this.envelope.seal(verifier, sealContext(stateHash, binding));
    await this.prisma.signinLogin.create({
      data: {
        id: newId('signinLogin'),
        stateHash,
        verifier: new Uint8Array(sealed),
        returnTo,
        expiresAt: new Date(now + LOGIN_TTL_S * 1000),
        createdAt: new Date(now),
      },
      select: { id: true },
    });
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: this.#callback,
      scope: 'openid',
      state,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    return { location: url.href, binding };
  }

  /**
   * GET /login/callback: the sign-in's state is claimed once (a conditional update, across
   * servers), the verifier opens only with the browser's binding cookie, and openid-client
   * exchanges the code and checks the ID token. Answers the person's `sub` and where to go.
   */
  async finish(
    query: URLSearchParams,
    binding: string | undefined,
  ): Promise<Result<{ sub: string; returnTo: string }, LoginFailure>> {
    const states = query.getAll('state');
    const state = states[0];
    if (states.length !== 1 || !state || state.length > 512 || !binding) return err('state_invalid');
    const stateHash = sha256(state);
    const row = await this.prisma.signinLogin.findUnique({
      where: { stateHash },
      select: { id: true, verifier: true, returnTo: true },
    });
    if (!row) return err('state_invalid');
    let verifier: string;
    try {
      verifier = await this.envelope.openString(Buffer.from(row.verifier), sealContext(stateHash, binding));
    } catch {
      return err('state_invalid'); // another browser's callback
    }
    const now = new Date(this.clock.now());
    const { count } = await this.prisma.signinLogin.updateMany({
      where: { id: row.id, usedAt: null, expiresAt: { gt: now } },
      data: { usedAt: now },
    });
    if (count !== 1) return err('state_invalid');
    if (query.has('error')) return err('denied');
    try {
      const current = new URL(this.#callback);
      for (const [name, value] of query) current.searchParams.append(name, value);
      const tokens = await oidc.authorizationCodeGrant(await this.#config(), current, {
        pkceCodeVerifier: verifier,
        expectedState: state,
        idTokenExpected: true,
      });
      const sub = tokens.claims()?.sub;
      if (!sub || sub.length > MAX_SUB_LENGTH || !NO_CONTROL_CHARACTERS.test(sub)) return err('no_subject');
      return ok({ sub, returnTo: row.returnTo });
    } catch (error) {
      this.logger.warn({ err: describe(error) }, 'sign-in: the provider did not complete the sign-in');
      return err('exchange_failed');
    }
  }
}

function sealContext(stateHash: string, binding: string): string {
  return `signin-login:${stateHash}:${sha256(binding)}`;
}

/** What a failure of the provider says, without anything the provider sent (it may echo a code). */
function describe(error: unknown): { name?: string; code?: string; error?: string } {
  const e = error as { name?: string; code?: string; error?: string };
  return { name: e?.name, code: e?.code, error: typeof e?.error === 'string' ? e.error : undefined };
}
