import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { provisionAgent } from '../support/agent.ts';
import { describeBackends } from '../support/db.ts';
import { call, startServer, type TestServer } from '../support/server.ts';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describeBackends('admin procedures', (backend) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer(backend.name);
  });
  afterAll(async () => {
    await server?.close();
  });
  const admin = (method: string, path: string, body?: unknown) =>
    call(server.url, method, path, { key: server.adminKey, body });

  describe('clients', () => {
    it('creates and lists clients', async () => {
      const created = await admin('POST', '/admin/clients', { name: 'Acme agent' });
      expect(created.status).toBe(200);
      expect(created.body).toEqual({
        clientId: expect.stringMatching(/^cli_[a-z0-9]{20}$/),
        name: 'Acme agent',
        createdAt: expect.stringMatching(ISO),
      });
      expect(created.headers.get('content-type')).toMatch(/^application\/json/);
      const listed = await admin('GET', '/admin/clients');
      expect(listed.status).toBe(200);
      expect(listed.body.clients).toContainEqual(created.body);
    });

    it('rejects a body without a name, with a pointer', async () => {
      const reply = await admin('POST', '/admin/clients', {});
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual({
        ok: false,
        error: 'invalid_request',
        message: expect.any(String),
        issues: [{ path: '/name', message: 'Required value is missing.' }],
      });
    });

    it('rejects a name of the wrong type', async () => {
      const reply = await admin('POST', '/admin/clients', { name: 42 });
      expect(reply.status).toBe(400);
      expect(reply.body.error).toBe('invalid_request');
      expect(reply.body.issues).toEqual([{ path: '/name', message: expect.any(String) }]);
    });

    it('rejects a body that is not an object', async () => {
      const reply = await admin('POST', '/admin/clients', ['x']);
      expect(reply.status).toBe(400);
      expect(reply.body).toMatchObject({ ok: false, error: 'invalid_request', issues: [{ path: '' }] });
    });
  });

  describe('redirect URIs', () => {
    let clientId: string;
    beforeAll(async () => {
      clientId = (await admin('POST', '/admin/clients', { name: 'uris' })).body.clientId;
    });

    it('adds, lists and removes exact URIs', async () => {
      const uri = 'https://agent.example/callback?tenant=7';
      const added = await admin('POST', `/admin/clients/${clientId}/redirect-uris`, { uri });
      expect(added.status).toBe(200);
      expect(added.body).toEqual({ clientId, uri });
      const again = await admin('POST', `/admin/clients/${clientId}/redirect-uris`, { uri });
      expect(again.status).toBe(200);
      await admin('POST', `/admin/clients/${clientId}/redirect-uris`, { uri: 'http://127.0.0.1:9/cb' });
      const listed = await admin('GET', `/admin/clients/${clientId}/redirect-uris`);
      expect(listed.status).toBe(200);
      expect(listed.body).toEqual({ uris: [uri, 'http://127.0.0.1:9/cb'] });
      const removed = await admin(
        'DELETE',
        `/admin/clients/${clientId}/redirect-uris?uri=${encodeURIComponent(uri)}`,
      );
      expect(removed.status).toBe(200);
      expect(removed.body).toEqual({ ok: true });
      expect((await admin('GET', `/admin/clients/${clientId}/redirect-uris`)).body).toEqual({
        uris: ['http://127.0.0.1:9/cb'],
      });
    });

    it.each([
      ['not a URL', 'callback', 'Must be an absolute http(s) URL.'],
      ['a fragment', 'https://agent.example/cb#frag', 'Must not contain a fragment.'],
      ['another scheme', 'javascript:alert(1)', 'Must be an absolute http(s) URL.'],
      ['ftp', 'ftp://agent.example/cb', 'Must be an absolute http(s) URL.'],
    ])('rejects %s', async (_label, uri, message) => {
      const reply = await admin('POST', `/admin/clients/${clientId}/redirect-uris`, { uri });
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual({
        ok: false,
        error: 'invalid_request',
        message: expect.any(String),
        issues: [{ path: '/uri', message }],
      });
    });

    it('answers 404 not_found for an unknown client', async () => {
      for (const reply of [
        await admin('POST', '/admin/clients/cli_nope/redirect-uris', { uri: 'https://a.example/cb' }),
        await admin('GET', '/admin/clients/cli_nope/redirect-uris'),
        await admin('DELETE', '/admin/clients/cli_nope/redirect-uris?uri=https%3A%2F%2Fa.example%2Fcb'),
      ]) {
        expect(reply.status).toBe(404);
        expect(reply.body).toEqual({ ok: false, error: 'not_found', message: 'No client has this id.' });
      }
    });

    it('answers 404 not_found when removing a URI that is not registered', async () => {
      const reply = await admin(
        'DELETE',
        `/admin/clients/${clientId}/redirect-uris?uri=https%3A%2F%2Fnever.example%2F`,
      );
      expect(reply.status).toBe(404);
      expect(reply.body).toEqual({
        ok: false,
        error: 'not_found',
        message: 'This URI is not registered on the client.',
      });
    });

    it('answers 400 when removing without the uri query', async () => {
      const reply = await admin('DELETE', `/admin/clients/${clientId}/redirect-uris`);
      expect(reply.status).toBe(400);
      expect(reply.body.issues).toEqual([{ path: '/uri', message: 'Required value is missing.' }]);
    });
  });

  describe('API keys', () => {
    it('issues a key shown once, stores only an argon2id hash', async () => {
      const clientId = (await admin('POST', '/admin/clients', { name: 'keys' })).body.clientId;
      const reply = await admin('POST', `/admin/clients/${clientId}/api-keys`, {
        name: 'ci',
        scopes: ['tools:execute', 'connections:read', 'tools:execute:github'],
      });
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({
        keyId: expect.stringMatching(/^key_[a-z0-9]{20}$/),
        apiKey: expect.stringMatching(/^tg_key_[a-z0-9]{20}_[A-Za-z0-9_-]{43}$/),
        scopes: ['tools:execute', 'connections:read', 'tools:execute:github'],
      });
      const row = await server.app.deps.db.prisma.apiKey.findUniqueOrThrow({
        where: { id: reply.body.keyId },
      });
      expect(row.hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
      expect(JSON.stringify(row)).not.toContain(reply.body.apiKey.slice(28));
    });

    it('rejects unknown scopes with their pointers, listing the valid ones', async () => {
      const SCOPES =
        'the scopes are tools:execute, tools:execute:<appId>, oauth:initiate, connections:read, connections:write, admin.';
      const clientId = (await admin('POST', '/admin/clients', { name: 'bad scopes' })).body.clientId;
      const reply = await admin('POST', `/admin/clients/${clientId}/api-keys`, {
        scopes: ['tools:execute', 'root', 'tools:execute:'],
      });
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual({
        ok: false,
        error: 'invalid_request',
        message: 'Some scopes are not known.',
        issues: [
          { path: '/scopes/1', message: `Unknown scope "root"; ${SCOPES}` },
          { path: '/scopes/2', message: `Unknown scope "tools:execute:"; ${SCOPES}` },
        ],
      });
    });

    it('rejects an empty or missing scope list', async () => {
      const clientId = (await admin('POST', '/admin/clients', { name: 'no scopes' })).body.clientId;
      const empty = await admin('POST', `/admin/clients/${clientId}/api-keys`, { scopes: [] });
      expect(empty.status).toBe(400);
      expect(empty.body.issues).toEqual([{ path: '/scopes', message: expect.any(String) }]);
      const missing = await admin('POST', `/admin/clients/${clientId}/api-keys`, {});
      expect(missing.body.issues).toEqual([{ path: '/scopes', message: 'Required value is missing.' }]);
    });

    it('answers 404 for a key of an unknown client', async () => {
      const reply = await admin('POST', '/admin/clients/cli_unknown/api-keys', { scopes: ['admin'] });
      expect(reply.status).toBe(404);
      expect(reply.body).toEqual({ ok: false, error: 'not_found', message: 'No client has this id.' });
    });

    it('revokes a key: it stops working at once on this server; revoking again is fine', async () => {
      const agent = await provisionAgent(server, ['admin']);
      expect((await call(server.url, 'GET', '/admin/clients', { key: agent.apiKey })).status).toBe(200);
      const revoked = await admin('DELETE', `/admin/api-keys/${agent.keyId}`);
      expect(revoked.status).toBe(200);
      expect(revoked.body).toEqual({ ok: true });
      const after = await call(server.url, 'GET', '/admin/clients', { key: agent.apiKey });
      expect(after.status).toBe(401);
      expect(after.body).toEqual({ ok: false, error: 'invalid_api_key', message: expect.any(String) });
      expect((await admin('DELETE', `/admin/api-keys/${agent.keyId}`)).body).toEqual({ ok: true });
    });

    it('answers 404 when revoking an unknown key', async () => {
      const reply = await admin('DELETE', '/admin/api-keys/key_doesnotexist');
      expect(reply.status).toBe(404);
      expect(reply.body).toEqual({ ok: false, error: 'not_found', message: 'No API key has this id.' });
    });
  });

  describe('admin authorization', () => {
    it('accepts TOOLGATE_ADMIN_KEY and a client key with the admin scope', async () => {
      expect((await admin('GET', '/admin/clients')).status).toBe(200);
      const agent = await provisionAgent(server, ['admin']);
      expect((await call(server.url, 'GET', '/admin/clients', { key: agent.apiKey })).status).toBe(200);
    });

    it('answers 403 rbac_denied with scope admin for a key without it, with or without a client id', async () => {
      const agent = await provisionAgent(server, ['tools:execute']);
      for (const clientId of [undefined, agent.clientId]) {
        const reply = await call(server.url, 'POST', '/admin/clients', {
          key: agent.apiKey,
          clientId,
          body: { name: 'x' },
        });
        expect(reply.status).toBe(403);
        expect(reply.body).toEqual({
          ok: false,
          error: 'rbac_denied',
          message: 'This API key lacks the scope admin.',
          reason: 'scope_missing',
          scope: 'admin',
        });
      }
    });

    it.each([
      ['no Authorization', {}],
      ['a non-Bearer scheme', { authorization: 'Basic abc' }],
      ['an empty bearer', { authorization: 'Bearer ' }],
      ['an unknown well-formed key', { authorization: `Bearer tg_key_${'a'.repeat(20)}_${'b'.repeat(43)}` }],
      ['a wrong admin key', { authorization: `Bearer ${'x'.repeat(40)}` }],
    ])('answers 401 invalid_api_key for %s', async (_label, headers) => {
      const reply = await call(server.url, 'GET', '/admin/clients', { headers });
      expect(reply.status).toBe(401);
      expect(reply.body).toEqual({
        ok: false,
        error: 'invalid_api_key',
        message: 'The API key is missing, malformed, unknown or revoked.',
      });
    });

    it('checks the key before the body', async () => {
      const reply = await call(server.url, 'POST', '/admin/clients', { body: { nope: true } });
      expect(reply.status).toBe(401);
      expect(reply.body.error).toBe('invalid_api_key');
    });
  });

  it('never writes a key or the admin key into a log line', async () => {
    const agent = await provisionAgent(server, ['admin']);
    await call(server.url, 'GET', '/admin/clients', { key: agent.apiKey });
    await call(server.url, 'GET', '/admin/clients', { key: `${agent.apiKey}x` });
    const logs = server.logs.join('');
    expect(logs).toContain('"path":"/admin/clients"');
    expect(logs).not.toContain(agent.apiKey);
    expect(logs).not.toContain(server.adminKey);
  });
});
