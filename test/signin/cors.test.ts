/**
 * CORS of MCP sign-in (docs/reference.md "MCP sign-in"): what a browser client calls by fetch —
 * discovery, registration, token, revocation — answers any origin (`*`, never credentials), errors
 * included, and its preflight is answered 204; the authorization endpoint, a navigation, has none.
 * A real page's fetch of registration and token is in test/mcp/cors-browser.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../support/server.ts';

/** Sign-in settings whose provider is never contacted by these tests (discovery is lazy). */
const LOGIN_ENV = {
  LOGIN_OIDC_ISSUER: 'https://login.invalid',
  LOGIN_OIDC_CLIENT_ID: 'toolgate',
  LOGIN_OIDC_CLIENT_SECRET: 'login-client-secret-for-tests',
};
const PAGE = 'http://127.0.0.1:5173';

/** Headers every answer has whatever it is (and no CORS fact): left out of the comparisons. */
const PLUMBING = new Set([
  'date',
  'connection',
  'keep-alive',
  'x-request-id',
  'content-length',
  'content-type',
]);

async function send(
  server: TestServer,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
) {
  const response = await fetch(new URL(path, server.url), {
    method,
    headers: { origin: PAGE, ...headers },
    body,
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: Object.fromEntries([...response.headers].filter(([name]) => !PLUMBING.has(name))),
    body: text === '' ? '' : JSON.parse(text),
  };
}

const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

describe('CORS of MCP sign-in', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer('pglite', { env: LOGIN_ENV, ownPublicUrl: true });
  });
  afterAll(() => server?.close());

  it.each([
    ['/.well-known/oauth-protected-resource/mcp', 'GET'],
    ['/.well-known/oauth-protected-resource', 'GET'],
    ['/.well-known/oauth-authorization-server', 'GET'],
    ['/oauth2/register', 'POST'],
    ['/oauth2/token', 'POST'],
    ['/oauth2/revoke', 'POST'],
  ])('answers the preflight of %s with 204 for any origin', async (path, method) => {
    const reply = await send(server, 'OPTIONS', path, {
      'access-control-request-method': method,
      'access-control-request-headers': 'content-type, mcp-protocol-version',
    });
    expect(reply).toEqual({
      status: 204,
      headers: {
        'access-control-allow-origin': '*',
        'access-control-allow-methods': method,
        'access-control-allow-headers': 'content-type, accept, mcp-protocol-version',
        'access-control-max-age': '7200',
      },
      body: '',
    });
  });

  it('makes registration readable from any origin, its refusals too', async () => {
    const registered = await send(
      server,
      'POST',
      '/oauth2/register',
      { 'content-type': 'application/json' },
      JSON.stringify({ redirect_uris: [`${PAGE}/callback`], client_name: 'web client' }),
    );
    expect([registered.status, registered.headers]).toEqual([
      201,
      { 'access-control-allow-origin': '*', ...NO_STORE },
    ]);
    expect(registered.body.client_id).toMatch(/^cli_/);

    const refused = await send(
      server,
      'POST',
      '/oauth2/register',
      { 'content-type': 'application/json' },
      '{',
    );
    expect(refused).toEqual({
      status: 400,
      headers: { 'access-control-allow-origin': '*', ...NO_STORE },
      body: { error: 'invalid_client_metadata', error_description: 'The body is not valid JSON.' },
    });
  });

  it('makes token and revocation answers readable from any origin, errors too', async () => {
    const client = await send(
      server,
      'POST',
      '/oauth2/register',
      { 'content-type': 'application/json' },
      JSON.stringify({ redirect_uris: [`${PAGE}/callback`] }),
    );
    const clientId: string = client.body.client_id;
    const token = await send(
      server,
      'POST',
      '/oauth2/token',
      FORM,
      new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: 'tg_rt_unknown',
        client_id: clientId,
      }).toString(),
    );
    expect([token.status, token.headers, token.body.error]).toEqual([
      400,
      { 'access-control-allow-origin': '*', ...NO_STORE },
      'invalid_grant',
    ]);
    const unknownClient = await send(server, 'POST', '/oauth2/token', FORM, 'grant_type=authorization_code');
    expect([unknownClient.status, unknownClient.headers]).toEqual([
      401,
      { 'access-control-allow-origin': '*', ...NO_STORE },
    ]);
    const notForm = await send(server, 'POST', '/oauth2/token', { 'content-type': 'application/json' }, '{}');
    expect([notForm.status, notForm.headers]).toEqual([
      400,
      { 'access-control-allow-origin': '*', ...NO_STORE },
    ]);

    const revoked = await send(
      server,
      'POST',
      '/oauth2/revoke',
      FORM,
      new URLSearchParams({ token: 'tg_rt_unknown', client_id: clientId }).toString(),
    );
    expect(revoked).toEqual({
      status: 200,
      headers: { 'access-control-allow-origin': '*', ...NO_STORE },
      body: '',
    });
  });

  it('gives the authorization endpoint, a navigation, no CORS', async () => {
    const page = await send(server, 'GET', '/oauth2/authorize?client_id=cli_unknown', {});
    expect([page.status, page.headers['access-control-allow-origin']]).toEqual([400, undefined]);
    const preflight = await send(server, 'OPTIONS', '/oauth2/authorize', {
      'access-control-request-method': 'GET',
    });
    expect([
      preflight.status,
      preflight.headers['access-control-allow-origin'],
      preflight.headers.allow,
    ]).toEqual([405, undefined, 'GET']);
  });
});
