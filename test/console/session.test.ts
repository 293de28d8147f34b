import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../server/clock.ts';
import { ConsoleSessions } from '../../server/console/sessions.ts';
import { CONSOLE_CSP } from '../../server/http/console-routes.ts';
import { provisionAgent } from '../support/agent.ts';
import { describeBackends } from '../support/db.ts';
import { call, type Reply, startServer, type TestServer } from '../support/server.ts';

/**
 * The web console's server side over plain HTTP: the page and its assets (CSP, caching), and the
 * session an admin key is exchanged for — its cookie, what the cookie may do on the admin routes
 * (reads; changes only with the CSRF token), and its end (sign-out, a revoked key, another
 * TOOLGATE_ADMIN_KEY). The browser itself drives the console in console.test.ts.
 */

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const COOKIE = /^toolgate_console=([A-Za-z0-9_-]{43}); Path=\/; Max-Age=43200; HttpOnly; SameSite=Strict$/;

/** The cookie a sign-in set, as the browser would send it back. */
function cookieOf(reply: Reply): string {
  const match = COOKIE.exec(reply.headers.get('set-cookie') ?? '');
  if (!match) throw new Error(`no session cookie in ${reply.headers.get('set-cookie')}`);
  return `toolgate_console=${match[1]}`;
}

describeBackends('web console sessions', (backend) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer(backend.name);
  });
  afterAll(async () => {
    await server?.close();
  });

  const signIn = (apiKey: unknown, headers: Record<string, string> = {}) =>
    call(server.url, 'POST', '/console/session', { body: { apiKey }, headers });
  const withCookie = (cookie: string, extra: Record<string, string> = {}) => ({
    headers: { cookie, ...extra },
  });

  it('exchanges an admin key for an HttpOnly, SameSite=Strict cookie and answers the session', async () => {
    const admin = await provisionAgent(server, ['admin']);
    const reply = await signIn(admin.apiKey);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      keyId: admin.keyId,
      expiresAt: expect.stringMatching(ISO),
      csrfToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    expect(reply.headers.get('cache-control')).toBe('no-store');
    const cookie = cookieOf(reply);
    // Neither the key nor the cookie's value is in the answer.
    expect(reply.text).not.toContain(admin.apiKey);
    expect(reply.text).not.toContain(cookie.split('=')[1]);
    expect(Date.parse(reply.body.expiresAt) - Date.now()).toBeGreaterThan(11.9 * 3600_000);

    const session = await call(server.url, 'GET', '/console/session', withCookie(cookie));
    expect([session.status, session.body]).toEqual([200, reply.body]);
    // The server keeps only a digest of the token, never the token or the key.
    const rows = await server.app.deps.db.prisma.consoleSession.findMany();
    expect(JSON.stringify(rows)).not.toContain(cookie.split('=')[1]);
    expect(JSON.stringify(rows)).not.toContain(admin.apiKey);
  });

  it('answers a wrong key, a key without admin and a malformed body with the contract errors', async () => {
    const agent = await provisionAgent(server, ['tools:execute']);
    const wrong = await signIn('tg_not-a-key');
    expect([wrong.status, wrong.body]).toEqual([
      401,
      {
        ok: false,
        error: 'invalid_api_key',
        message: 'This key is not a valid API key (unknown, mistyped or revoked).',
      },
    ]);
    expect(wrong.headers.get('set-cookie')).toBeNull();
    const notAdmin = await signIn(agent.apiKey);
    expect([notAdmin.status, notAdmin.body]).toEqual([
      403,
      {
        ok: false,
        error: 'rbac_denied',
        message: 'This API key lacks the scope admin.',
        reason: 'scope_missing',
        scope: 'admin',
      },
    ]);
    const message = 'Send { "apiKey": "<admin key>" }.';
    for (const body of [{}, { apiKey: '' }, { apiKey: server.adminKey, extra: 1 }]) {
      const reply = await call(server.url, 'POST', '/console/session', { body });
      expect([reply.status, reply.body]).toEqual([
        400,
        { ok: false, error: 'invalid_request', message, issues: [{ path: '/apiKey', message }] },
      ]);
    }
    const notJson = await call(server.url, 'POST', '/console/session', {
      raw: `apiKey=${server.adminKey}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect([notJson.status, notJson.body.error]).toEqual([415, 'unsupported_media_type']);
    // A sign-in posted by another site's page (login CSRF) is refused before the key is looked at.
    const crossSite = await signIn(server.adminKey, { 'sec-fetch-site': 'cross-site' });
    const why = 'A console sign-in must come from the console page of this server.';
    expect([crossSite.status, crossSite.body]).toEqual([
      400,
      { ok: false, error: 'invalid_request', message: why, issues: [{ path: '', message: why }] },
    ]);
    // A browser that sends no Fetch Metadata still names the page's origin: another site's, or an
    // opaque one, is refused; this server's own is not.
    for (const origin of ['https://evil.example', 'null']) {
      const other = await signIn(server.adminKey, { origin });
      expect([other.status, other.body]).toEqual([
        400,
        { ok: false, error: 'invalid_request', message: why, issues: [{ path: '', message: why }] },
      ]);
    }
    expect((await signIn(server.adminKey, { origin: new URL(server.url).origin })).status).toBe(200);
  });

  it('lets the cookie read admin routes, and change them only with the CSRF token', async () => {
    const opened = await signIn(server.adminKey);
    const cookie = cookieOf(opened);
    const list = await call(server.url, 'GET', '/admin/clients', withCookie(cookie));
    expect(list.status).toBe(200);
    expect(Array.isArray(list.body.clients)).toBe(true);

    const refused = await call(server.url, 'POST', '/admin/clients', {
      body: { name: 'x' },
      ...withCookie(cookie),
    });
    expect([refused.status, refused.body]).toEqual([
      401,
      {
        ok: false,
        error: 'invalid_api_key',
        message: 'A change made with a console session needs its X-CSRF-Token.',
      },
    ]);
    const forged = await call(server.url, 'POST', '/admin/clients', {
      body: { name: 'x' },
      ...withCookie(cookie, { 'x-csrf-token': 'A'.repeat(43) }),
    });
    expect(forged.status).toBe(401);
    const made = await call(server.url, 'POST', '/admin/clients', {
      body: { name: 'from the console' },
      ...withCookie(cookie, { 'x-csrf-token': opened.body.csrfToken }),
    });
    expect([made.status, made.body.name]).toEqual([200, 'from the console']);
    // Over tRPC too: a mutation needs the token, a query does not.
    const trpcRead = await call(
      server.url,
      'GET',
      '/trpc/admin.clients.list?input=%7B%7D',
      withCookie(cookie),
    );
    expect(trpcRead.status).toBe(200);
    const trpcWrite = await call(server.url, 'POST', '/trpc/admin.clients.create', {
      body: { name: 'y' },
      ...withCookie(cookie),
    });
    expect([trpcWrite.status, trpcWrite.body.error.data.contract.error]).toEqual([401, 'invalid_api_key']);
  });

  it('judges a request that carries a key by the key alone, and agent routes never by the cookie', async () => {
    const cookie = cookieOf(await signIn(server.adminKey));
    const wrongKey = await call(server.url, 'GET', '/admin/clients', {
      key: 'tg_wrong',
      ...withCookie(cookie),
    });
    expect([wrongKey.status, wrongKey.body.error]).toEqual([401, 'invalid_api_key']);
    const agentRoute = await call(server.url, 'GET', '/tools', withCookie(cookie));
    expect([agentRoute.status, agentRoute.body.error]).toEqual([401, 'invalid_api_key']);
  });

  it('ends when its key is revoked, on this server and on another sharing the database', async () => {
    const admin = await provisionAgent(server, ['admin']);
    const opened = await signIn(admin.apiKey);
    const cookie = cookieOf(opened);
    // A second server on the same PostgreSQL (a PGlite folder opens in one process at a time).
    const other =
      backend.name === 'postgres'
        ? await startServer(backend.name, { databaseUrl: server.databaseUrl })
        : null;
    try {
      expect((await call(server.url, 'GET', '/admin/apps', withCookie(cookie))).status).toBe(200);
      const revoked = await call(server.url, 'DELETE', `/admin/api-keys/${admin.keyId}`, {
        key: server.adminKey,
      });
      expect(revoked.status).toBe(200);
      const ended = {
        ok: false,
        error: 'invalid_api_key',
        message: 'The console session has ended (signed out, expired, or its key revoked).',
      };
      for (const url of other ? [server.url, other.url] : [server.url]) {
        const after = await call(url, 'GET', '/admin/apps', withCookie(cookie));
        expect([after.status, after.body]).toEqual([401, ended]);
        const session = await call(url, 'GET', '/console/session', withCookie(cookie));
        expect([session.status, session.body.error]).toEqual([401, 'invalid_api_key']);
      }
    } finally {
      await other?.close();
    }
  });

  it('signs out: the cookie is cleared and the session refused everywhere', async () => {
    const opened = await signIn(server.adminKey);
    const cookie = cookieOf(opened);
    const noToken = await call(server.url, 'DELETE', '/console/session', withCookie(cookie));
    expect([noToken.status, noToken.body.error]).toEqual([401, 'invalid_api_key']);
    const out = await call(
      server.url,
      'DELETE',
      '/console/session',
      withCookie(cookie, { 'x-csrf-token': opened.body.csrfToken }),
    );
    expect([out.status, out.body]).toEqual([200, { ok: true }]);
    expect(out.headers.get('set-cookie')).toBe(
      'toolgate_console=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict',
    );
    expect((await call(server.url, 'GET', '/admin/apps', withCookie(cookie))).status).toBe(401);
    // Signing out without a live session still clears the cookie.
    const again = await call(server.url, 'DELETE', '/console/session', withCookie(cookie));
    expect([again.status, again.body]).toEqual([200, { ok: true }]);
  });

  it('serves the page and its assets offline, with a strict CSP and cache headers that fit each', async () => {
    const page = await call(server.url, 'GET', '/console');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
        "font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    );
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('cache-control')).toBe('no-cache');
    // No inline script, nothing from another origin.
    expect(page.text).not.toMatch(/<script(?![^>]*\ssrc=)/);
    expect(page.text).not.toMatch(/(src|href)="https?:/);
    const etag = page.headers.get('etag') as string;
    const revalidated = await call(server.url, 'GET', '/console', { headers: { 'if-none-match': etag } });
    expect([revalidated.status, revalidated.text]).toEqual([304, '']);
    // Every path of the console is the same page (it routes itself).
    for (const path of ['/console/', '/console/apps', '/console/apps/pets']) {
      const same = await call(server.url, 'GET', path);
      expect([path, same.status, same.text]).toEqual([path, 200, page.text]);
    }

    const assets = [...page.text.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]);
    expect(assets).toEqual([
      expect.stringMatching(/^\/console\/assets\/main-[A-Z0-9]+\.css$/),
      expect.stringMatching(/^\/console\/assets\/main-[A-Z0-9]+\.js$/),
    ]);
    for (const asset of assets) {
      const reply = await call(server.url, 'GET', asset as string);
      expect(reply.status).toBe(200);
      expect(reply.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(reply.headers.get('content-type')).toMatch(/^text\/(css|javascript); charset=utf-8$/);
    }
    for (const missing of ['/console/assets/nope.js', '/console/assets/..%2Findex.html']) {
      const reply = await call(server.url, 'GET', missing);
      expect([missing, reply.status, reply.body]).toEqual([
        missing,
        404,
        { ok: false, error: 'not_found', message: 'No such path.' },
      ]);
    }
  });
});

describe('web console sessions of TOOLGATE_ADMIN_KEY and behind https', () => {
  it('are Secure __Host- cookies behind https, and end when the server runs with another admin key', async () => {
    const server = await startServer('pglite', { env: { PUBLIC_URL: 'https://toolgate.example' } });
    try {
      const opened = await call(server.url, 'POST', '/console/session', {
        body: { apiKey: server.adminKey },
      });
      const setCookie = opened.headers.get('set-cookie') ?? '';
      expect(setCookie).toMatch(
        /^__Host-toolgate_console=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=43200; HttpOnly; SameSite=Strict; Secure$/,
      );
      const cookie = setCookie.split(';')[0] as string;
      expect((await call(server.url, 'GET', '/admin/apps', { headers: { cookie } })).status).toBe(200);
      // The plain name is not read behind https (a cookie set over http cannot pose as the session).
      const plain = cookie.replace('__Host-', '');
      expect((await call(server.url, 'GET', '/admin/apps', { headers: { cookie: plain } })).status).toBe(401);

      // A server of the same database started with another TOOLGATE_ADMIN_KEY, or with none.
      const token = cookie.split('=')[1] as string;
      const { prisma } = server.app.deps.db;
      expect(await new ConsoleSessions(prisma, systemClock, server.adminKey).find(token)).not.toBeNull();
      expect(
        await new ConsoleSessions(prisma, systemClock, `rotated-${'k'.repeat(40)}`).find(token),
      ).toBeNull();
      expect(await new ConsoleSessions(prisma, systemClock, undefined).find(token)).toBeNull();
    } finally {
      await server.close();
    }
  });
});
