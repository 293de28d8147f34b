import * as oidc from 'openid-client';
import type { Clock } from '../clock.ts';
import type { Prisma, PrismaClient } from '../db/generated/client.ts';
import { newId } from '../ids.ts';
import { err, ok, type Result } from '../result.ts';
import type { SigninClients } from './clients.ts';
import { type OAuthError, oauthError } from './oauth-error.ts';
import { mcpResource } from './paths.ts';
import { hashSecret, isSecretOf, newSecret } from './secrets.ts';

/**
 * POST /oauth2/token and /oauth2/revoke (docs/reference.md "MCP sign-in"; RFC 6749 §4.1.3 and §6,
 * RFC 7636 §4.6, RFC 7009, OAuth 2.1 §4.3.1 refresh rotation). Every single-use rule is one
 * conditional UPDATE, so of two servers handed the same code or refresh token only one goes on;
 * the other finds it spent, and then the whole family of tokens is revoked (a spent secret
 * presented again means someone else holds it).
 */

export const ACCESS_TOKEN_TTL_S = 60 * 60;
export const REFRESH_TOKEN_TTL_S = 30 * 24 * 60 * 60;
export const CODE_TTL_MS = 60_000;
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

export interface TokenAnswer {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

const invalidGrant = (text: string) => err(oauthError('invalid_grant', text));

function single(params: URLSearchParams, name: string): string | undefined | null {
  const values = params.getAll(name);
  if (values.length > 1) return null;
  return values[0] || undefined;
}

export class SigninTokens {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
    private readonly clients: SigninClients,
    private readonly issuer: string,
  ) {}

  /** A code for an approved consent request (single use, CODE_TTL_MS). */
  async issueCode(request: {
    clientId: string;
    redirectUri: string;
    codeChallenge: string;
    userId: string;
    scopes: string[];
  }): Promise<string> {
    const { secret, hash } = newSecret('code');
    const now = this.clock.now();
    await this.prisma.signinCode.create({
      data: { codeHash: hash, ...request, expiresAt: new Date(now + CODE_TTL_MS), createdAt: new Date(now) },
      select: { codeHash: true },
    });
    return secret;
  }

  /** The token endpoint: the client (public, by client_id), then the grant. */
  async exchange(params: URLSearchParams): Promise<Result<TokenAnswer, OAuthError>> {
    const grantType = single(params, 'grant_type');
    const clientId = single(params, 'client_id');
    if (grantType === null || clientId === null)
      return err(oauthError('invalid_request', 'Each parameter may be sent once.'));
    if (!grantType) return err(oauthError('invalid_request', 'grant_type is required.'));
    if (grantType !== 'authorization_code' && grantType !== 'refresh_token')
      return err(
        oauthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token.'),
      );
    if (!clientId)
      return err(oauthError('invalid_client', 'client_id is required (public clients send it).'));
    const client = await this.clients.known(clientId);
    if (!client) return err(oauthError('invalid_client', 'The client_id names no registered client.'));
    const resource = single(params, 'resource');
    if (resource === null) return err(oauthError('invalid_request', 'Each parameter may be sent once.'));
    if (resource !== undefined && resource !== mcpResource(this.issuer))
      return err(oauthError('invalid_target', `resource must be ${mcpResource(this.issuer)}.`));
    return grantType === 'authorization_code'
      ? this.#redeemCode(client.clientId, params)
      : this.#refresh(client.clientId, params);
  }

  async #redeemCode(clientId: string, params: URLSearchParams): Promise<Result<TokenAnswer, OAuthError>> {
    const code = single(params, 'code');
    const redirectUri = single(params, 'redirect_uri');
    const verifier = single(params, 'code_verifier');
    if (code === null || redirectUri === null || verifier === null)
      return err(oauthError('invalid_request', 'Each parameter may be sent once.'));
    if (!code || !redirectUri || !verifier)
      return err(oauthError('invalid_request', 'code, redirect_uri and code_verifier are required.'));
    if (!isSecretOf('code', code)) return invalidGrant('The code is unknown, expired or used.');
    const codeHash = hashSecret(code);
    const row = await this.prisma.signinCode.findUnique({
      where: { codeHash },
      select: {
        clientId: true,
        redirectUri: true,
        codeChallenge: true,
        userId: true,
        scopes: true,
        usedAt: true,
        grantId: true,
      },
    });
    if (!row) return invalidGrant('The code is unknown, expired or used.');
    if (row.clientId !== clientId) return invalidGrant('The code was issued to another client.');
    if (row.redirectUri !== redirectUri)
      return invalidGrant('redirect_uri is not the one of the authorization request.');
    if (!VERIFIER.test(verifier) || (await oidc.calculatePKCECodeChallenge(verifier)) !== row.codeChallenge)
      return invalidGrant('code_verifier does not match the code_challenge.');
    const now = this.clock.now();
    if (row.usedAt !== null) {
      // RFC 6749 §4.1.2: a code used twice revokes what it was exchanged for.
      if (row.grantId) await this.#revokeGrant(row.grantId);
      return invalidGrant('The code is unknown, expired or used.');
    }
    return this.prisma.$transaction(async (tx) => {
      const { count } = await tx.signinCode.updateMany({
        where: { codeHash, usedAt: null, expiresAt: { gt: new Date(now) } },
        data: { usedAt: new Date(now) },
      });
      if (count !== 1) return invalidGrant('The code is unknown, expired or used.');
      const grantId = newId('signinGrant');
      await tx.signinGrant.create({
        data: { id: grantId, clientId, userId: row.userId, scopes: row.scopes, createdAt: new Date(now) },
        select: { id: true },
      });
      await tx.signinCode.update({ where: { codeHash }, data: { grantId }, select: { codeHash: true } });
      return ok(await this.#issueTokens(tx, grantId, row.scopes, now));
    });
  }

  async #refresh(clientId: string, params: URLSearchParams): Promise<Result<TokenAnswer, OAuthError>> {
    const token = single(params, 'refresh_token');
    if (token === null) return err(oauthError('invalid_request', 'Each parameter may be sent once.'));
    if (!token) return err(oauthError('invalid_request', 'refresh_token is required.'));
    if (!isSecretOf('refresh', token))
      return invalidGrant('The refresh token is unknown, expired or revoked.');
    const hash = hashSecret(token);
    const row = await this.prisma.signinToken.findUnique({
      where: { hash },
      select: {
        kind: true,
        expiresAt: true,
        grant: { select: { id: true, clientId: true, scopes: true, revokedAt: true } },
      },
    });
    const now = this.clock.now();
    if (row?.kind !== 'refresh' || row.grant.revokedAt !== null || row.expiresAt.getTime() <= now)
      return invalidGrant('The refresh token is unknown, expired or revoked.');
    if (row.grant.clientId !== clientId)
      return invalidGrant('The refresh token was issued to another client.');
    const grant = row.grant;
    const outcome = await this.prisma.$transaction(async (tx) => {
      const { count } = await tx.signinToken.updateMany({
        where: { hash, usedAt: null },
        data: { usedAt: new Date(now) },
      });
      if (count !== 1) return undefined;
      return this.#issueTokens(tx, grant.id, grant.scopes, now);
    });
    if (outcome) return ok(outcome);
    // A rotated refresh token came back: whoever holds it is not (only) the client. End the family.
    await this.#revokeGrant(grant.id);
    return invalidGrant('The refresh token was already used; every token of this grant is now revoked.');
  }

  async #issueTokens(
    tx: Prisma.TransactionClient,
    grantId: string,
    scopes: string[],
    now: number,
  ): Promise<TokenAnswer> {
    const access = newSecret('access');
    const refresh = newSecret('refresh');
    await tx.signinToken.createMany({
      data: [
        {
          hash: access.hash,
          grantId,
          kind: 'access',
          expiresAt: new Date(now + ACCESS_TOKEN_TTL_S * 1000),
          createdAt: new Date(now),
        },
        {
          hash: refresh.hash,
          grantId,
          kind: 'refresh',
          expiresAt: new Date(now + REFRESH_TOKEN_TTL_S * 1000),
          createdAt: new Date(now),
        },
      ],
    });
    return {
      access_token: access.secret,
      token_type: 'Bearer',
      expires_in: ACCESS_TOKEN_TTL_S,
      refresh_token: refresh.secret,
      scope: scopes.join(' '),
    };
  }

  /**
   * POST /oauth2/revoke (RFC 7009): the token's whole grant ends (access and refresh tokens alike,
   * §2.1 allows it). An unknown token, or one of another client, is answered the same 200 and
   * changes nothing.
   */
  async revoke(params: URLSearchParams): Promise<Result<void, OAuthError>> {
    const token = single(params, 'token');
    const clientId = single(params, 'client_id');
    if (token === null || clientId === null)
      return err(oauthError('invalid_request', 'Each parameter may be sent once.'));
    if (!token) return err(oauthError('invalid_request', 'token is required.'));
    if (!clientId)
      return err(oauthError('invalid_client', 'client_id is required (public clients send it).'));
    const client = await this.clients.known(clientId);
    if (!client) return err(oauthError('invalid_client', 'The client_id names no registered client.'));
    if (!isSecretOf('access', token) && !isSecretOf('refresh', token)) return ok(undefined);
    const row = await this.prisma.signinToken.findUnique({
      where: { hash: hashSecret(token) },
      select: { grant: { select: { id: true, clientId: true } } },
    });
    if (row && row.grant.clientId === client.clientId) await this.#revokeGrant(row.grant.id);
    return ok(undefined);
  }

  async #revokeGrant(grantId: string): Promise<void> {
    await this.prisma.signinGrant.updateMany({
      where: { id: grantId, revokedAt: null },
      data: { revokedAt: new Date(this.clock.now()) },
    });
  }
}
