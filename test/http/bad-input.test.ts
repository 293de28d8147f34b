// Regression tests of an attack run (issue 11): inputs that used to answer 500 get a 4xx of the
// contract table: JSON nested thousands of levels deep, NUL and other control characters in
// strings that reach PostgreSQL or a Location header, redirect URIs that are no safe Location.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Agent, asAgent, provisionAgent } from '../support/agent.ts';
import { call, startServer, type TestServer } from '../support/server.ts';

const TOO_DEEP = {
  ok: false,
  error: 'invalid_request',
  message: 'The body is nested too deeply.',
  issues: [{ path: '', message: 'JSON nested deeper than 128 levels.' }],
};

const shapeError = (path: string, message: string) => ({
  ok: false,
  error: 'invalid_request',
  message: 'The request does not have the expected shape.',
  issues: [{ path, message }],
});
const CONTROL = 'Must not contain control characters.';

/** `levels` levels of JSON nesting in all, the outer object included. */
function nestedParameters(levels: number): string {
  const arrays = levels - 2; // below the body object and `parameters` itself
  return `{"toolId":"open:::getItem","parameters":{"body":${'['.repeat(arrays)}${']'.repeat(arrays)}}}`;
}

describe('bad input never answers 500', () => {
  let server: TestServer;
  let agent: Agent;
  beforeAll(async () => {
    server = await startServer('pglite');
    agent = await provisionAgent(server, ['tools:execute', 'oauth:initiate', 'connections:read']);
  });
  afterAll(async () => {
    await server?.close();
  });

  /** As the agent, with every body (raw ones too) declared JSON. */
  const asJsonAgent = (headers: Record<string, string> = {}) =>
    asAgent(agent, { 'content-type': 'application/json', ...headers });
  const asAdmin = () => ({ key: server.adminKey });

  describe('JSON nesting (docs/reference.md "Limits": at most 128 levels)', () => {
    it('refuses a body nested deeper than 128 levels with 400, with or without an idempotency key', async () => {
      for (const levels of [129, 3_000, 5_000, 100_000]) {
        for (const headers of [{}, { 'x-service-idempotency-key': `deep-${levels}` }] as Record<
          string,
          string
        >[]) {
          const reply = await call(server.url, 'POST', '/proxyV2', {
            ...asJsonAgent(headers),
            raw: nestedParameters(levels),
          });
          expect([levels, reply.status, reply.body]).toEqual([levels, 400, TOO_DEEP]);
        }
      }
    });

    it('lets exactly 128 levels through to the next check', async () => {
      const reply = await call(server.url, 'POST', '/proxyV2', {
        ...asJsonAgent(),
        raw: nestedParameters(128),
      });
      expect(reply.status).toBe(404);
      expect(reply.body.error).toBe('tool_not_found');
    });

    it('does not count brackets inside strings', async () => {
      const raw = JSON.stringify({ name: `${'['.repeat(150)}{` });
      const reply = await call(server.url, 'POST', '/admin/clients', {
        ...asAdmin(),
        raw,
        headers: { 'content-type': 'application/json' },
      });
      expect(reply.status).toBe(200);
      expect(reply.body.name).toBe(`${'['.repeat(150)}{`);
    });

    it('refuses the same over tRPC, in a body and in a query input', async () => {
      const posted = await call(server.url, 'POST', '/trpc/proxy', {
        ...asJsonAgent(),
        raw: nestedParameters(3_000),
      });
      expect(posted.status).toBe(400);
      expect(posted.body.error.data.contract).toEqual(TOO_DEEP);
      // A request line stays under Node's 16 KiB header limit.
      const input = encodeURIComponent(`{"appId":${'['.repeat(500)}${']'.repeat(500)}}`);
      const queried = await call(server.url, 'GET', `/trpc/tools.list?input=${input}`, asJsonAgent());
      expect(queried.status).toBe(400);
      expect(queried.body.error.data.contract).toEqual(TOO_DEEP);
    });
  });

  describe('control characters (docs/reference.md "Calling conventions": refused at the schema with the field pointer)', () => {
    it('in a client name, an API key name, a redirect URI and a client id', async () => {
      const cases: Array<[string, string, unknown, string]> = [
        ['POST', '/admin/clients', { name: 'a\u0000b' }, '/name'],
        ['POST', '/admin/clients', { name: 'a\u007fb' }, '/name'],
        [
          'POST',
          `/admin/clients/${agent.clientId}/api-keys`,
          { name: 'k\u0000', scopes: ['admin'] },
          '/name',
        ],
        ['POST', `/admin/clients/${agent.clientId}/api-keys`, { scopes: ['admin\u0000'] }, '/scopes/0'],
        [
          'POST',
          `/admin/clients/${agent.clientId}/redirect-uris`,
          { uri: 'https://a.example/\u0000' },
          '/uri',
        ],
        ['POST', '/admin/clients/cli%00x/redirect-uris', { uri: 'https://a.example/cb' }, '/clientId'],
        ['GET', '/admin/clients/cli%00x/redirect-uris', undefined, '/clientId'],
        ['DELETE', '/admin/api-keys/key%00x', undefined, '/keyId'],
      ];
      for (const [method, path, body, pointer] of cases) {
        const reply = await call(server.url, method, path, { ...asAdmin(), body });
        expect([path, reply.status, reply.body]).toEqual([path, 400, shapeError(pointer, CONTROL)]);
      }
      const query = await call(
        server.url,
        'DELETE',
        `/admin/clients/${agent.clientId}/redirect-uris?uri=${encodeURIComponent('https://a.example/\u0000')}`,
        asAdmin(),
      );
      expect([query.status, query.body]).toEqual([400, shapeError('/uri', CONTROL)]);
    });

    it('in /initiateOAuth userId and clientRedirectUri', async () => {
      for (const [field, body] of [
        ['/userId', { appId: 'demo', userId: 'u\u0000', clientRedirectUri: 'https://a.example/cb' }],
        ['/userId', { appId: 'demo', userId: 'u\r\nx', clientRedirectUri: 'https://a.example/cb' }],
        ['/clientRedirectUri', { appId: 'demo', userId: 'u', clientRedirectUri: 'https://a.example/\u0000' }],
      ] as const) {
        const reply = await call(server.url, 'POST', '/initiateOAuth', { ...asJsonAgent(), body });
        expect([field, reply.status, reply.body]).toEqual([field, 400, shapeError(field, CONTROL)]);
      }
    });

    it('in a toolId and a /tools appId', async () => {
      const tool = await call(server.url, 'POST', '/proxyV2', {
        ...asJsonAgent(),
        body: { toolId: 'de\u0000mo:::getMe', parameters: {} },
      });
      expect([tool.status, tool.body]).toEqual([400, shapeError('/toolId', CONTROL)]);
      // An app id is refused by its own pattern, as on /connections and the admin routes.
      const tools = await call(server.url, 'GET', '/tools?appId=de%00mo', asJsonAgent());
      expect([tools.status, tools.body]).toEqual([
        400,
        shapeError('/appId', 'Must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$.'),
      ]);
    });

    it('in X-Service-User-Id (a tab is the one control character a header can carry)', async () => {
      const reply = await call(
        server.url,
        'GET',
        '/connections',
        asJsonAgent({ 'x-service-user-id': 'u\t1' }),
      );
      expect(reply.status).toBe(400);
      expect(reply.body.error).toBe('invalid_request');
      expect(reply.body.issues).toEqual([
        { path: '', message: expect.stringContaining('X-Service-User-Id') },
      ]);
    });

    it('in an app registration’s URLs and credentials', async () => {
      const base = {
        provider: 'toolgate.test',
        openapi: { openapi: '3.1.0', info: { title: 't', version: '1' }, paths: {} },
      };
      const oauth = {
        type: 'oauth2',
        authorizationUrl: 'https://p.example/authorize',
        tokenUrl: 'https://p.example/token',
        clientId: 'c',
        clientSecret: 's',
        scopes: [],
      };
      for (const [pointer, auth] of [
        ['/auth/tokenUrl', { ...oauth, tokenUrl: 'https://p.example/to\r\nken' }],
        ['/auth/clientId', { ...oauth, clientId: 'c\u0000' }],
        ['/auth/value', { type: 'api_key', in: 'header', name: 'X-Key', value: 'v\r\nX-Injected: 1' }],
      ] as const) {
        const reply = await call(server.url, 'PUT', '/admin/apps/ctl', {
          ...asAdmin(),
          body: { ...base, auth },
        });
        expect([pointer, reply.status, reply.body.error]).toEqual([pointer, 400, 'invalid_request']);
        expect(reply.body.issues).toContainEqual({ path: pointer, message: CONTROL });
      }
    });
  });

  describe('redirect URIs (docs/reference.md "Administration")', () => {
    it.each([
      ['a CRLF', 'http://evil.example/\r\nX: y', CONTROL],
      ['a tab', 'https://a.example/\tcb', CONTROL],
      ['userinfo', 'https://good.example@evil.example/cb', 'Must not contain userinfo.'],
      ['userinfo with a password', 'https://u:p@a.example/cb', 'Must not contain userinfo.'],
      ['a fragment', 'https://a.example/cb#x', 'Must not contain a fragment.'],
      ['a relative URI', '/cb', 'Must be an absolute http(s) URL.'],
      ['no slashes after the scheme', 'http:evil.example/cb', 'Must be an absolute http(s) URL.'],
      ['another scheme', 'ftp://a.example/cb', 'Must be an absolute http(s) URL.'],
      ['javascript', 'javascript:alert(1)', 'Must be an absolute http(s) URL.'],
    ])('refuses %s at registration', async (_label, uri, message) => {
      const reply = await call(server.url, 'POST', `/admin/clients/${agent.clientId}/redirect-uris`, {
        ...asAdmin(),
        body: { uri },
      });
      expect([reply.status, reply.body]).toEqual([400, shapeError('/uri', message)]);
    });

    it('accepts an absolute http(s) URI with a query of its own', async () => {
      const uri = 'https://agent.example/cb?tenant=a%20b&x=1';
      const reply = await call(server.url, 'POST', `/admin/clients/${agent.clientId}/redirect-uris`, {
        ...asAdmin(),
        body: { uri },
      });
      expect([reply.status, reply.body]).toEqual([200, { clientId: agent.clientId, uri }]);
    });
  });
});
