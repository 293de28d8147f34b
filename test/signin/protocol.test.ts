/**
 * The authorization server of MCP sign-in by the letter (docs/reference.md "MCP sign-in"): every
 * refusal of /oauth2/authorize, /oauth2/token and /oauth2/revoke is the RFCs' error (JSON or the
 * redirect's `error`), never a 500; codes are single use and live 60 s, PKCE is checked, refresh
 * tokens rotate and a spent one revokes its family, tokens work on /mcp only, expire and revoke;
 * and no code, token or verifier is left in the database or the log.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { dumpDatabase } from '../oauth/harness.ts';
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

const mcpList = (url: string, token: string) =>
  fetch(new URL('/mcp', url), {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });

describeBackends('MCP sign-in protocol', (backend) => {
  let world: SigninWorld;
  let clientId: string;
  let otherClientId: string;
  /** Every secret the tests saw, for the final scan. */
  const secrets: string[] = [];

  beforeAll(async () => {
    world = await startSigninWorld(backend.name);
    clientId = await registerClient(world.url);
    otherClientId = await registerClient(world.url, TEST_REDIRECT, 'another client');
  }, 120_000);
  afterAll(() => world?.close());

  /** Signs `account` in, approves, and answers the code (and the PKCE pair it is bound to). */
  async function code(account = 'ada', client = clientId) {
    const pkce = pkcePair();
    const back = await world.browser(account).authorize(authorizeUrl(world.url, client, pkce.challenge));
    const value = back.searchParams.get('code') as string;
    secrets.push(value, pkce.verifier);
    return { code: value, ...pkce };
  }

  async function tokens(account = 'ada') {
    const { code: value, verifier } = await code(account);
    const reply = await postForm(world.url, '/oauth2/token', {
      grant_type: 'authorization_code',
      code: value,
      redirect_uri: TEST_REDIRECT,
      code_verifier: verifier,
      client_id: clientId,
    });
    expect(reply.status).toBe(200);
    secrets.push(reply.body.access_token, reply.body.refresh_token);
    return reply.body as { access_token: string; refresh_token: string };
  }

  it.each([
    [{ client_id: null }, 'invalid_request', 'client_id is required, once.'],
    [{ client_id: 'cli_unknownunknownunkno' }, 'invalid_client', 'The client_id names no registered client.'],
    [
      { redirect_uri: 'https://evil.example/cb' },
      'invalid_request',
      'redirect_uri must be one of the redirect URIs registered for this client.',
    ],
    [
      { redirect_uri: null },
      'invalid_request',
      'redirect_uri must be one of the redirect URIs registered for this client.',
    ],
  ])('authorize shows %j as %s without redirecting', async (extra, error, description) => {
    const response = await fetch(authorizeUrl(world.url, clientId, pkcePair().challenge, extra), {
      redirect: 'manual',
    });
    expect([response.status, response.headers.get('location'), await response.json()]).toEqual([
      400,
      null,
      { error, error_description: description },
    ]);
  });

  it.each([
    [{ response_type: 'token' }, 'unsupported_response_type', 'response_type must be code.'],
    [
      { code_challenge: null },
      'invalid_request',
      'code_challenge is required: the S256 challenge of a PKCE verifier.',
    ],
    [{ code_challenge_method: 'plain' }, 'invalid_request', 'code_challenge_method must be S256.'],
    [{ code_challenge_method: null }, 'invalid_request', 'code_challenge_method must be S256.'],
    [{ resource: 'https://other.example/mcp' }, 'invalid_target', 'resource must be {base}/mcp.'],
  ])('authorize sends %j back to the client as %s with state and iss', async (extra, error, description) => {
    const response = await fetch(authorizeUrl(world.url, clientId, pkcePair().challenge, extra), {
      redirect: 'manual',
    });
    expect(response.status).toBe(302);
    const back = new URL(response.headers.get('location') as string);
    expect(back.origin + back.pathname).toBe(TEST_REDIRECT);
    expect(Object.fromEntries(back.searchParams)).toEqual({
      error,
      error_description: description.replace('{base}', world.url),
      state: 'client-state-1',
      iss: world.url,
    });
  });

  it('authorize sends a person who is not signed in to the login provider; a loopback redirect URI matches on any port', async () => {
    const response = await fetch(
      authorizeUrl(world.url, clientId, pkcePair().challenge, {
        redirect_uri: 'http://127.0.0.1:5999/callback',
      }),
      { redirect: 'manual' },
    );
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get('location') as string);
    expect(location.origin + location.pathname).toBe(`${world.login.issuer}/auth`);
    expect(location.searchParams.get('redirect_uri')).toBe(`${world.url}/login/callback`);
    expect(location.searchParams.get('code_challenge_method')).toBe('S256');
    expect(response.headers.get('set-cookie')).toMatch(
      /^toolgate_login=[^;]+; Path=\/; Max-Age=600; HttpOnly; SameSite=Lax$/,
    );
  });

  it('the consent page names the client and what it may do, under a strict policy; deny answers access_denied', async () => {
    const browser = world.browser('ada');
    const page = await browser.open(authorizeUrl(world.url, clientId, pkcePair().challenge));
    if (page.kind !== 'page') throw new Error('no consent page');
    expect(page.status).toBe(200);
    expect(page.html).toContain('<strong>raw client</strong> asks to use toolgate as you');
    expect(page.html).toContain('run the tools of every app on your behalf');
    expect(page.html).toContain('<button name="decision" value="approve">');
    expect(page.html).toContain('<button name="decision" value="deny">');
    expect(page.html).not.toMatch(/<script|https?:\/\/(?!127\.0\.0\.1)/);
    expect(page.headers.get('content-security-policy')).toMatch(
      /^default-src 'none'; style-src 'nonce-[^']+'; form-action 'self' http:\/\/127\.0\.0\.1:33418; frame-ancestors 'none'; base-uri 'none'$/,
    );
    const session = browser.cookies(new URL(world.url).origin);
    expect(session.has('toolgate_session')).toBe(true);
    const back = await browser.decide(page, 'deny');
    if (back.kind !== 'left') throw new Error('no redirect');
    expect(Object.fromEntries(back.url.searchParams)).toEqual({
      error: 'access_denied',
      state: 'client-state-1',
      iss: world.url,
    });
    // The request is spent: deciding again is refused.
    const again = await browser.decide(page, 'approve');
    expect(again.kind === 'page' && again.status).toBe(400);
  });

  it('a consent form posted by another person, or from another site, is refused', async () => {
    const ada = world.browser('ada');
    const page = await ada.open(authorizeUrl(world.url, clientId, pkcePair().challenge));
    const mallory = world.browser('mallory');
    await mallory.open(authorizeUrl(world.url, clientId, pkcePair().challenge)); // signs mallory in
    const stolen = await mallory.decide(page, 'approve');
    expect(stolen.kind === 'page' && stolen.status).toBe(403);
    if (page.kind !== 'page') throw new Error('no page');
    const forged = await fetch(new URL('/oauth2/authorize/decision', world.url), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
      body: 'request=x&decision=approve',
    });
    expect(forged.status).toBe(403);
  });

  it('redeems a code once, with PKCE, for tokens that work on /mcp only', async () => {
    const { access_token } = await tokens();
    expect((await mcpList(world.url, access_token)).status).toBe(200);
    for (const path of ['/tools', '/connections']) {
      const response = await fetch(new URL(path, world.url), {
        headers: { authorization: `Bearer ${access_token}` },
      });
      expect([path, response.status, ((await response.json()) as { error: string }).error]).toEqual([
        path,
        401,
        'invalid_api_key',
      ]);
    }
  });

  it.each([
    [
      'a wrong verifier',
      // Another last character (a fixed 'A' equals the verifier 1 time in 64).
      (c: { verifier: string }) => ({
        code_verifier: `${c.verifier.slice(0, -1)}${c.verifier.endsWith('A') ? 'B' : 'A'}`,
      }),
      'invalid_grant',
      'code_verifier does not match the code_challenge.',
    ],
    [
      'another redirect URI',
      () => ({ redirect_uri: 'http://127.0.0.1:1/other' }),
      'invalid_grant',
      'redirect_uri is not the one of the authorization request.',
    ],
    [
      'another client',
      () => ({ client_id: 'OTHER' }),
      'invalid_grant',
      'The code was issued to another client.',
    ],
    [
      'another resource',
      () => ({ resource: 'https://other.example/mcp' }),
      'invalid_target',
      'resource must be {base}/mcp.',
    ],
    [
      'a made-up code',
      () => ({ code: 'tg_ac_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }),
      'invalid_grant',
      'The code is unknown, expired or used.',
    ],
    [
      'no verifier',
      () => ({ code_verifier: '' }),
      'invalid_request',
      'code, redirect_uri and code_verifier are required.',
    ],
    [
      'another grant type',
      () => ({ grant_type: 'client_credentials' }),
      'unsupported_grant_type',
      'grant_type must be authorization_code or refresh_token.',
    ],
  ] as const)('token refuses %s, and the code still works', async (_what, change, error, description) => {
    const issued = await code();
    const base = {
      grant_type: 'authorization_code',
      code: issued.code,
      redirect_uri: TEST_REDIRECT,
      code_verifier: issued.verifier,
      client_id: clientId,
    };
    const changed = Object.fromEntries(
      Object.entries({ ...base, ...change(issued) }).map(([k, v]) => [k, v === 'OTHER' ? otherClientId : v]),
    );
    const refused = await postForm(world.url, '/oauth2/token', changed);
    expect([refused.status, refused.body]).toEqual([
      400,
      { error, error_description: description.replace('{base}', world.url) },
    ]);
    expect(refused.headers.get('cache-control')).toBe('no-store');
    expect((await postForm(world.url, '/oauth2/token', base)).status).toBe(200);
  });

  it('token refuses a missing or unknown client (401 invalid_client) and a body that is not a form', async () => {
    const missing = await postForm(world.url, '/oauth2/token', {
      grant_type: 'authorization_code',
      code: 'x',
    });
    expect([missing.status, missing.body]).toEqual([
      401,
      { error: 'invalid_client', error_description: 'client_id is required (public clients send it).' },
    ]);
    const unknown = await postForm(world.url, '/oauth2/token', {
      grant_type: 'refresh_token',
      client_id: 'cli_nope',
    });
    expect([unknown.status, unknown.body]).toEqual([
      401,
      { error: 'invalid_client', error_description: 'The client_id names no registered client.' },
    ]);
    const json = await fetch(new URL('/oauth2/token', world.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"grant_type":"authorization_code"}',
    });
    expect([json.status, await json.json()]).toEqual([
      400,
      { error: 'invalid_request', error_description: 'The body must be application/x-www-form-urlencoded.' },
    ]);
  });

  it('a code used twice is refused and revokes the tokens it was exchanged for', async () => {
    const issued = await code();
    const form = {
      grant_type: 'authorization_code',
      code: issued.code,
      redirect_uri: TEST_REDIRECT,
      code_verifier: issued.verifier,
      client_id: clientId,
    };
    const first = await postForm(world.url, '/oauth2/token', form);
    expect(first.status).toBe(200);
    secrets.push(first.body.access_token, first.body.refresh_token);
    const second = await postForm(world.url, '/oauth2/token', form);
    expect([second.status, second.body]).toEqual([
      400,
      { error: 'invalid_grant', error_description: 'The code is unknown, expired or used.' },
    ]);
    expect((await mcpList(world.url, first.body.access_token)).status).toBe(401);
  });

  it('a code older than 60 s is refused', async () => {
    const issued = await code();
    world.harness.clock.advance(61_000);
    const reply = await postForm(world.url, '/oauth2/token', {
      grant_type: 'authorization_code',
      code: issued.code,
      redirect_uri: TEST_REDIRECT,
      code_verifier: issued.verifier,
      client_id: clientId,
    });
    expect([reply.status, reply.body]).toEqual([
      400,
      { error: 'invalid_grant', error_description: 'The code is unknown, expired or used.' },
    ]);
  });

  it('refresh rotates; a used refresh token is refused and ends the whole family', async () => {
    const first = await tokens();
    const refreshed = await postForm(world.url, '/oauth2/token', {
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
      client_id: clientId,
    });
    expect([refreshed.status, Object.keys(refreshed.body).sort()]).toEqual([
      200,
      ['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type'],
    ]);
    secrets.push(refreshed.body.access_token, refreshed.body.refresh_token);
    expect(refreshed.body.refresh_token).not.toBe(first.refresh_token);
    expect((await mcpList(world.url, refreshed.body.access_token)).status).toBe(200);

    const reused = await postForm(world.url, '/oauth2/token', {
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
      client_id: clientId,
    });
    expect([reused.status, reused.body]).toEqual([
      400,
      {
        error: 'invalid_grant',
        error_description: 'The refresh token was already used; every token of this grant is now revoked.',
      },
    ]);
    world.harness.clock.advance(5_000); // what the recheck allows a server to take
    expect((await mcpList(world.url, refreshed.body.access_token)).status).toBe(401);
    const latest = await postForm(world.url, '/oauth2/token', {
      grant_type: 'refresh_token',
      refresh_token: refreshed.body.refresh_token,
      client_id: clientId,
    });
    expect([latest.status, latest.body.error]).toEqual([400, 'invalid_grant']);
  });

  it('an access token expires after an hour; a revoked one stops within 5 s', async () => {
    const expiring = await tokens();
    world.harness.clock.advance(3_601_000);
    expect((await mcpList(world.url, expiring.access_token)).status).toBe(401);

    const revoked = await tokens();
    expect((await mcpList(world.url, revoked.access_token)).status).toBe(200);
    const answer = await postForm(world.url, '/oauth2/revoke', {
      token: revoked.access_token,
      client_id: clientId,
    });
    expect([answer.status, answer.body]).toEqual([200, undefined]);
    world.harness.clock.advance(5_000);
    const refused = await mcpList(world.url, revoked.access_token);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${world.url}/.well-known/oauth-protected-resource/mcp"`,
    );
    const refresh = await postForm(world.url, '/oauth2/token', {
      grant_type: 'refresh_token',
      refresh_token: revoked.refresh_token,
      client_id: clientId,
    });
    expect([refresh.status, refresh.body.error]).toEqual([400, 'invalid_grant']);
  });

  it('revoke answers 200 for an unknown token, and refuses a missing token or client', async () => {
    expect(
      (await postForm(world.url, '/oauth2/revoke', { token: 'tg_at_nope', client_id: clientId })).status,
    ).toBe(200);
    const noToken = await postForm(world.url, '/oauth2/revoke', { client_id: clientId });
    expect([noToken.status, noToken.body]).toEqual([
      400,
      { error: 'invalid_request', error_description: 'token is required.' },
    ]);
    const noClient = await postForm(world.url, '/oauth2/revoke', { token: 'x' });
    expect([noClient.status, noClient.body]).toEqual([
      401,
      { error: 'invalid_client', error_description: 'client_id is required (public clients send it).' },
    ]);
  });

  it('keeps no code, token or verifier in the database or the log', async () => {
    expect(secrets.length).toBeGreaterThan(20);
    const dump = await dumpDatabase(world.harness.server);
    const logs = world.harness.server.logs.join('');
    for (const secret of [...secrets, ...world.login.secrets()]) {
      expect(dump.includes(secret), `database holds ${secret.slice(0, 8)}…`).toBe(false);
      expect(logs.includes(secret), `log holds ${secret.slice(0, 8)}…`).toBe(false);
    }
  });
});
