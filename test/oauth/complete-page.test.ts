// Issue 23, item 8: GET /oauth/complete, where an authorization started from MCP ends, renders only
// what the server knows. The callback sends the browser to `?flow=<id>` (an id the server issued);
// the page reads that flow's outcome from the database and tells it in fixed words. Query text
// (`app`, `status`, `reason`) is never shown, an unknown id gets a neutral page, and the page can
// be neither framed nor sniffed.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LIMITS } from '../../server/config.ts';
import { startAuthorization } from '../../server/oauth/initiate.ts';
import { isOAuthApp, type OAuthApp } from '../../server/oauth/provider.ts';
import { hashState } from '../../server/oauth/state.ts';
import { describeBackends } from '../support/db.ts';
import { call, type Reply } from '../support/server.ts';
import { type Harness, PUBLIC_URL, startHarness } from './harness.ts';

const PAGE = /^http:\/\/toolgate\.test\/oauth\/complete\?flow=(ost_[a-z0-9]{20})$/;

describeBackends('GET /oauth/complete', (backend) => {
  let h: Harness;
  let app: OAuthApp;
  beforeAll(async () => {
    h = await startHarness(backend.name);
    const loaded = await h.server.app.deps.apps.get('demo');
    if (!loaded || !isOAuthApp(loaded)) throw new Error('demo is not an oauth2 app');
    app = loaded;
  });
  afterAll(async () => {
    await h?.close();
  });

  /** A flow as MCP starts one (no client redirect URI): its authorization URL and state. */
  const startFlow = (userId: string) =>
    startAuthorization(h.server.app.deps, h.agent.clientId, userId, app, null);

  const open = (query: string) => call(h.server.url, 'GET', `/oauth/complete${query}`);

  /** The page's title and text, without markup. */
  const words = (reply: Reply) => reply.text.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');

  function expectHardened(reply: Reply): void {
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(reply.headers.get('x-content-type-options')).toBe('nosniff');
    expect(reply.headers.get('x-frame-options')).toBe('DENY');
    expect(reply.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(reply.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(reply.headers.get('cache-control')).toBe('no-store');
  }

  it('never shows query text: an attacker’s app, status and reason get the neutral page', async () => {
    for (const query of [
      '?app=gh.evil-login.example&status=error&reason=session_expired_login_at_evil.example',
      '?app=demo&status=success',
      '?flow=ost_aaaaaaaaaaaaaaaaaaaa',
      '?flow=%3Cscript%3Ealert(1)%3C%2Fscript%3E',
      '',
    ]) {
      const reply = await open(query);
      expectHardened(reply);
      expect(words(reply)).toContain('Nothing to show');
      for (const text of ['evil', 'session_expired', 'is now connected', 'script', 'demo']) {
        expect(reply.text).not.toContain(text);
      }
    }
  });

  it('ends a flow from MCP on its page, which says what the server recorded, also on a replayed callback', async () => {
    const flow = await startFlow('paged');
    const row = await h.server.app.deps.states.find(flow.state);
    const pending = await open(`?flow=${row?.id}`);
    expectHardened(pending);
    expect(words(pending)).toContain('Connecting demo has not finished');

    const back = await h.provider.authorize(flow.authorizationUrl, { account: 'paged' });
    const callback = await h.callback(back);
    expect(callback.status).toBe(302);
    const location = callback.headers.get('location') as string;
    expect(location).toMatch(PAGE);
    expect(PAGE.exec(location)?.[1]).toBe(row?.id);
    const done = await open(new URL(location).search);
    expectHardened(done);
    expect(done.text).toContain('<strong>demo</strong> is now connected');
    for (const secret of [...h.provider.secrets(), flow.state, hashState(flow.state)]) {
      expect(done.text).not.toContain(secret);
      expect(location).not.toContain(secret);
    }

    // The same callback again: refused (the state is spent), and the page still tells the first outcome.
    const replay = await h.callback(back);
    expect(replay.headers.get('location')).toBe(location);
    expect(words(await open(new URL(location).search))).toContain('demo is now connected');
  });

  it('tells a failure in fixed words, never in the provider’s (or an attacker’s) error code', async () => {
    const denied = await startFlow('declining');
    const refused = await h.callback(
      await h.provider.authorize(denied.authorizationUrl, { account: 'declining', deny: true }),
    );
    const deniedPage = await open(new URL(refused.headers.get('location') as string).search);
    expect(words(deniedPage)).toContain('demo was not connected: the authorization was declined');

    // Whoever started a flow holds its state and can make up the callback's `error`.
    const crafted = await startFlow('crafting');
    const search = new URLSearchParams({
      state: crafted.state,
      iss: h.provider.issuer,
      error: 'session_expired_login_at_evil.example',
    });
    const forged = await h.callback(`${PUBLIC_URL}/handleOAuthCallback?${search}`);
    expect(forged.headers.get('location')).toMatch(PAGE);
    const forgedPage = await open(new URL(forged.headers.get('location') as string).search);
    expect(words(forgedPage)).toContain('demo was not connected: the provider refused the authorization');
    expect(forgedPage.text).not.toContain('evil');
    expect(forgedPage.text).not.toContain('session_expired');
  });

  it('records a late callback of an expired flow', async () => {
    const flow = await startFlow('slowpoke');
    const back = await h.provider.authorize(flow.authorizationUrl, { account: 'slowpoke' });
    h.clock.advance(LIMITS.oauthStateTtlMs + 1);
    const late = await h.callback(back);
    expect(late.headers.get('location')).toMatch(PAGE);
    const page = await open(new URL(late.headers.get('location') as string).search);
    expect(words(page)).toContain('demo was not connected: the link had expired or was already used');
  });
});
