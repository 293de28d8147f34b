// RFC 9207: a missing `iss` fails a callback carrying a code when the registration names the issuer or the
// provider's metadata promises the parameter; a wrong one always does.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IssuerPolicy } from '../../server/oauth/issuer.ts';
import type { OAuthAuth } from '../../server/oauth/provider.ts';
import { CALLBACK, CLIENT_REDIRECT, type Harness, redirectQuery, startHarness } from './harness.ts';

describe('iss in the authorization response (RFC 9207)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('pglite');
  });
  afterAll(async () => {
    await h?.close();
  });

  async function consent(userId: string): Promise<URL> {
    const started = await h.initiate(userId);
    return h.provider.authorize(started.body.authorizationUrl, { account: userId });
  }

  it('fails a callback without iss when the provider’s metadata says it sends one', async () => {
    const back = await consent('no-iss');
    expect(back.searchParams.get('iss')).toBe(h.provider.issuer);
    back.searchParams.delete('iss');
    const exchanges = h.provider.counts.authorization_code;
    const reply = await h.callback(back);
    expect(reply.status).toBe(302);
    expect(reply.headers.get('location')).toBe(`${CLIENT_REDIRECT}&status=error&reason=issuer_mismatch`);
    expect(h.provider.counts.authorization_code).toBe(exchanges);
  });

  it('passes a provider error on as reason without iss: an error carries no code to mix up', async () => {
    for (const error of ['access_denied', 'temporarily_unavailable']) {
      const started = await h.initiate(`error-no-iss-${error}`);
      const reply = await h.callback(`${CALLBACK}?error=${error}&state=${started.body.state}`);
      expect(reply.status).toBe(302);
      expect(reply.headers.get('location')).toBe(`${CLIENT_REDIRECT}&status=error&reason=${error}`);
    }
    // A wrong iss is refused whatever the response holds.
    const started = await h.initiate('error-wrong-iss');
    const reply = await h.callback(
      `${CALLBACK}?error=access_denied&state=${started.body.state}&iss=${encodeURIComponent('https://attacker.example')}`,
    );
    expect(reply.headers.get('location')).toBe(`${CLIENT_REDIRECT}&status=error&reason=issuer_mismatch`);
  });

  describe('with the issuer in the registration', () => {
    beforeAll(async () => {
      await h.registerApp({ issuer: h.provider.issuer });
    });
    afterAll(async () => {
      await h.registerApp();
    });

    it('shows the issuer back with the app', async () => {
      const app = await fetch(`${h.server.url}/admin/apps/demo`, {
        headers: { authorization: `Bearer ${h.server.adminKey}` },
      }).then((r) => r.json() as Promise<{ auth: { issuer?: string } }>);
      expect(app.auth.issuer).toBe(h.provider.issuer);
    });

    it('accepts exactly that iss', async () => {
      const reply = await h.callback(await consent('exact'));
      expect(redirectQuery(reply).get('status')).toBe('success');
    });

    it('fails a missing iss, and one of the same origin that is not the issuer', async () => {
      for (const iss of [null, `${h.provider.issuer}/`, `${h.provider.issuer}/other`]) {
        const back = await consent(`bad-iss-${iss}`);
        if (iss === null) back.searchParams.delete('iss');
        else back.searchParams.set('iss', iss);
        const exchanges = h.provider.counts.authorization_code;
        const reply = await h.callback(back);
        expect([iss, redirectQuery(reply).get('reason')]).toEqual([iss, 'issuer_mismatch']);
        expect(h.provider.counts.authorization_code).toBe(exchanges);
      }
    });
  });
});

describe('IssuerPolicy against metadata answers', () => {
  let server: Server;
  let base: string;
  let metadata: Record<string, unknown> | null = null;
  let requests = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      requests += 1;
      if (metadata && req.url === '/.well-known/oauth-authorization-server') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(metadata));
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  const auth = (extra: Partial<OAuthAuth> = {}): OAuthAuth => ({
    type: 'oauth2',
    authorizationUrl: `${base}/authorize`,
    tokenUrl: `${base}/token`,
    clientId: 'c',
    scopes: [],
    tokenAuthMethod: 'client_secret_basic',
    ...extra,
  });

  it('requires iss only where the metadata says so, and caches the answer', async () => {
    const silent = pino({ level: 'silent' });
    metadata = null;
    expect(await new IssuerPolicy(silent).requiresIss(auth())).toBe(false);
    metadata = { issuer: base, authorization_response_iss_parameter_supported: false };
    expect(await new IssuerPolicy(silent).requiresIss(auth())).toBe(false);
    metadata = { issuer: base, authorization_response_iss_parameter_supported: true };
    const policy = new IssuerPolicy(silent);
    expect(await policy.requiresIss(auth())).toBe(true);
    const seen = requests;
    expect(await policy.requiresIss(auth())).toBe(true);
    expect(requests).toBe(seen);
    // Metadata of another issuer is not this server's.
    metadata = { issuer: 'https://elsewhere.example', authorization_response_iss_parameter_supported: true };
    expect(await new IssuerPolicy(silent).requiresIss(auth())).toBe(false);
  });

  it('requires iss whenever the registration names the issuer, without asking', async () => {
    const seen = requests;
    const policy = new IssuerPolicy(pino({ level: 'silent' }));
    expect(await policy.requiresIss(auth({ issuer: `${base}/tenant` }))).toBe(true);
    expect(requests).toBe(seen);
    expect(policy.accepts(auth({ issuer: `${base}/tenant` }), `${base}/tenant`)).toBe(true);
    expect(policy.accepts(auth({ issuer: `${base}/tenant` }), base)).toBe(false);
    expect(policy.accepts(auth(), base)).toBe(true);
    expect(policy.accepts(auth(), 'https://attacker.example')).toBe(false);
  });
});
