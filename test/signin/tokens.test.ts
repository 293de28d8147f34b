/**
 * The token and revoke endpoints of MCP sign-in, at the edges protocol.test.ts leaves open (issue 29:
 * each test here kills mutants of server/signin/tokens.ts that survived that suite): a parameter sent
 * twice (RFC 6749 §3.2, "parameters MUST NOT be included more than once"), each missing parameter
 * with its own description, the token answer and the stored rows whole (lifetimes, SHA-256 only),
 * the resource that is accepted (RFC 8707), a verifier with characters RFC 7636 §4.1 forbids, a
 * refresh token of another client or made up, revocation that ends one grant and nobody else's, and
 * a refresh token refused at exactly its 30 days.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { PrismaClient } from '../../server/db/generated/client.ts';
import { ACCESS_TOKEN_TTL_S, REFRESH_TOKEN_TTL_S } from '../../server/signin/tokens.ts';
import { describeBackends } from '../support/db.ts';
import {
  authorizeUrl,
  pkcePair,
  postForm,
  registerClient,
  type SigninWorld,
  startSigninWorld,
  TEST_REDIRECT,
} from '../support/signin.ts';

/** A form POST whose pairs may repeat a name (postForm takes a record, so it cannot). */
async function postPairs(url: string, path: string, pairs: [string, string][]) {
  const response = await fetch(new URL(path, url), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(pairs).toString(),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

const sha256 = (value: string) => createHash('sha256').update(value, 'utf8').digest('base64url');
const refused = (error: string, description: string, status = 400) => ({
  status,
  body: { error, error_description: description },
});
/** A secret of our exact shape that was never issued (so only the database can say no). */
const madeUp = (prefix: string) => `${prefix}${'A'.repeat(43)}`;

describeBackends('MCP sign-in tokens', (backend) => {
  let world: SigninWorld;
  let prisma: PrismaClient;
  let clientId: string;
  let otherClientId: string;

  beforeAll(async () => {
    world = await startSigninWorld(backend.name);
    prisma = world.harness.server.app.deps.db.prisma;
    clientId = await registerClient(world.url);
    otherClientId = await registerClient(world.url, TEST_REDIRECT, 'another client');
  }, 120_000);
  afterAll(() => world?.close());

  async function code(options: { verifier?: string; scope?: string } = {}) {
    const pkce = options.verifier
      ? { verifier: options.verifier, challenge: sha256(options.verifier) }
      : pkcePair();
    const extra: Record<string, string> = options.scope ? { scope: options.scope } : {};
    const back = await world
      .browser('ada')
      .authorize(authorizeUrl(world.url, clientId, pkce.challenge, extra));
    return { code: back.searchParams.get('code') as string, verifier: pkce.verifier };
  }

  const redeemForm = (issued: { code: string; verifier: string }) => ({
    grant_type: 'authorization_code',
    code: issued.code,
    redirect_uri: TEST_REDIRECT,
    code_verifier: issued.verifier,
    client_id: clientId,
  });

  async function tokens() {
    const reply = await postForm(world.url, '/oauth2/token', redeemForm(await code()));
    expect(reply.status).toBe(200);
    return reply.body as { access_token: string; refresh_token: string };
  }

  const refresh = (token: string, client = clientId) =>
    postForm(world.url, '/oauth2/token', {
      grant_type: 'refresh_token',
      refresh_token: token,
      client_id: client,
    });

  it('refuses any parameter of the token endpoint sent twice', async () => {
    const issued = await code();
    const base = Object.entries(redeemForm(issued));
    for (const [name, value] of [...base, ['resource', `${world.url}/mcp`]] as [string, string][]) {
      const pairs: [string, string][] = [...base.filter(([k]) => k !== name), [name, value], [name, value]];
      expect([name, await postPairs(world.url, '/oauth2/token', pairs)]).toEqual([
        name,
        refused('invalid_request', 'Each parameter may be sent once.'),
      ]);
    }
    const { refresh_token } = await tokens();
    const twice = await postPairs(world.url, '/oauth2/token', [
      ['grant_type', 'refresh_token'],
      ['client_id', clientId],
      ['refresh_token', refresh_token],
      ['refresh_token', refresh_token],
    ]);
    expect(twice).toEqual(refused('invalid_request', 'Each parameter may be sent once.'));
    // Nothing was spent by the refusals.
    expect((await postForm(world.url, '/oauth2/token', redeemForm(issued))).status).toBe(200);
    expect((await refresh(refresh_token)).status).toBe(200);
  });

  it('names each missing parameter of the token endpoint', async () => {
    const issued = await code();
    const form = redeemForm(issued);
    const without = (name: string) =>
      postForm(
        world.url,
        '/oauth2/token',
        Object.fromEntries(Object.entries(form).filter(([k]) => k !== name)),
      );
    const { status, body } = await without('grant_type');
    expect({ status, body }).toEqual(refused('invalid_request', 'grant_type is required.'));
    for (const name of ['code', 'redirect_uri']) {
      const reply = await without(name);
      expect([name, { status: reply.status, body: reply.body }]).toEqual([
        name,
        refused('invalid_request', 'code, redirect_uri and code_verifier are required.'),
      ]);
    }
    const noRefresh = await postForm(world.url, '/oauth2/token', {
      grant_type: 'refresh_token',
      client_id: clientId,
    });
    expect({ status: noRefresh.status, body: noRefresh.body }).toEqual(
      refused('invalid_request', 'refresh_token is required.'),
    );
  });

  it('answers the tokens whole for the resource of /mcp and stores only their hashes, with their lifetimes', async () => {
    const issued = await code({ scope: 'tools:execute tools:execute:demo' });
    const now = world.harness.clock.now();
    const reply = await postForm(world.url, '/oauth2/token', {
      ...redeemForm(issued),
      resource: `${world.url}/mcp`,
    });
    expect({ status: reply.status, body: reply.body }).toEqual({
      status: 200,
      body: {
        access_token: expect.stringMatching(/^tg_at_[A-Za-z0-9_-]{43}$/),
        token_type: 'Bearer',
        expires_in: 3600,
        refresh_token: expect.stringMatching(/^tg_rt_[A-Za-z0-9_-]{43}$/),
        scope: 'tools:execute tools:execute:demo',
      },
    });
    expect([ACCESS_TOKEN_TTL_S, REFRESH_TOKEN_TTL_S]).toEqual([3600, 30 * 24 * 3600]);
    const access = await prisma.signinToken.findUniqueOrThrow({
      where: { hash: sha256(reply.body.access_token) },
      include: { grant: true },
    });
    const refreshRow = await prisma.signinToken.findMany({
      where: { grantId: access.grantId, kind: 'refresh' },
    });
    expect({ ...access, grant: undefined }).toEqual({
      hash: sha256(reply.body.access_token),
      grantId: expect.stringMatching(/^sgr_[a-z0-9]{20}$/),
      kind: 'access',
      expiresAt: new Date(now + 3600 * 1000),
      usedAt: null,
      createdAt: new Date(now),
      grant: undefined,
    });
    expect(refreshRow).toEqual([
      {
        hash: sha256(reply.body.refresh_token),
        grantId: access.grantId,
        kind: 'refresh',
        expiresAt: new Date(now + 30 * 24 * 3600 * 1000),
        usedAt: null,
        createdAt: new Date(now),
      },
    ]);
    expect(access.grant.scopes).toEqual(['tools:execute', 'tools:execute:demo']);
  });

  it('refuses a code not of our shape as unknown', async () => {
    const reply = await postForm(world.url, '/oauth2/token', {
      ...redeemForm(await code()),
      code: 'not-a-code',
    });
    expect({ status: reply.status, body: reply.body }).toEqual(
      refused('invalid_grant', 'The code is unknown, expired or used.'),
    );
  });

  it.each([
    ['a character before', `!${'a'.repeat(43)}`],
    ['a character after', `${'a'.repeat(43)}!`],
  ])(
    'refuses a verifier with %s the allowed ones, even when its challenge matches',
    async (_what, verifier) => {
      const issued = await code({ verifier });
      const reply = await postForm(world.url, '/oauth2/token', redeemForm(issued));
      expect({ status: reply.status, body: reply.body }).toEqual(
        refused('invalid_grant', 'code_verifier does not match the code_challenge.'),
      );
    },
  );

  it('refuses a refresh token of another client without spending it, a made-up one, and an access token', async () => {
    const first = await tokens();
    const other = await refresh(first.refresh_token, otherClientId);
    expect({ status: other.status, body: other.body }).toEqual(
      refused('invalid_grant', 'The refresh token was issued to another client.'),
    );
    for (const token of [madeUp('tg_rt_'), first.access_token]) {
      const reply = await refresh(token);
      expect({ status: reply.status, body: reply.body }).toEqual(
        refused('invalid_grant', 'The refresh token is unknown, expired or revoked.'),
      );
    }
    expect((await refresh(first.refresh_token)).status).toBe(200);
  });

  it('revoke ends the token’s own grant only, and only for its own client', async () => {
    const ada = await tokens();
    const kept = await tokens();
    // Another client revoking ada's token: 200, and nothing changes.
    const foreign = await postForm(world.url, '/oauth2/revoke', {
      token: ada.refresh_token,
      client_id: otherClientId,
    });
    expect([foreign.status, foreign.body]).toEqual([200, undefined]);
    const stillAda = await refresh(ada.refresh_token);
    expect(stillAda.status).toBe(200);
    // A token of our shape that was never issued: 200, nothing changes.
    for (const token of [madeUp('tg_at_'), madeUp('tg_rt_')]) {
      const unknown = await postForm(world.url, '/oauth2/revoke', { token, client_id: clientId });
      expect([unknown.status, unknown.body]).toEqual([200, undefined]);
    }
    const own = await postForm(world.url, '/oauth2/revoke', {
      token: stillAda.body.access_token,
      client_id: clientId,
    });
    expect([own.status, own.body]).toEqual([200, undefined]);
    expect((await refresh(stillAda.body.refresh_token)).body.error).toBe('invalid_grant');
    // The other grant of the same person and client lives on.
    expect((await refresh(kept.refresh_token)).status).toBe(200);
  });

  it('revoke refuses a parameter sent twice and an unknown client', async () => {
    const { access_token } = await tokens();
    for (const name of ['token', 'client_id']) {
      const value = name === 'token' ? access_token : clientId;
      const pairs: [string, string][] = [
        ['token', access_token],
        ['client_id', clientId],
      ];
      pairs.push([name, value]);
      expect([name, await postPairs(world.url, '/oauth2/revoke', pairs)]).toEqual([
        name,
        refused('invalid_request', 'Each parameter may be sent once.'),
      ]);
    }
    const unknown = await postForm(world.url, '/oauth2/revoke', {
      token: access_token,
      client_id: 'cli_unknownunknownunkno',
    });
    expect({ status: unknown.status, body: unknown.body }).toEqual(
      refused('invalid_client', 'The client_id names no registered client.', 401),
    );
  });

  // Last: it moves the shared clock a month on.
  it('a refresh token works until just before its 30 days and is refused at exactly 30 days', async () => {
    const first = await tokens();
    world.harness.clock.advance(REFRESH_TOKEN_TTL_S * 1000 - 1);
    const rotated = await refresh(first.refresh_token);
    expect(rotated.status).toBe(200);
    world.harness.clock.advance(REFRESH_TOKEN_TTL_S * 1000);
    const expired = await refresh(rotated.body.refresh_token);
    expect({ status: expired.status, body: expired.body }).toEqual(
      refused('invalid_grant', 'The refresh token is unknown, expired or revoked.'),
    );
  });
});
