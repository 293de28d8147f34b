/**
 * The audit trail misses nothing and records nothing that did not happen (docs/reference.md
 * "Audit trail"): MCP clients that register themselves (RFC 7591 dynamic registration, or a Client
 * ID Metadata Document) leave events like an admin's clients; and an administrative change commits
 * with its event or not at all — with the database refusing the event's insert (a trigger), every
 * change answers 500 and is not kept.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { manualClock } from '../../server/clock.ts';
import { METADATA_DOCUMENT_TTL_MS, SigninClients } from '../../server/signin/clients.ts';
import { MetadataDocumentFetcher } from '../../server/signin/metadata-document.ts';
import { provisionAgent, registerApp } from '../support/agent.ts';
import { describeBackends } from '../support/db.ts';
import { call, type TestServer } from '../support/server.ts';
import {
  authorizeUrl,
  pkcePair,
  type SigninWorld,
  startSigninWorld,
  TEST_REDIRECT,
} from '../support/signin.ts';

const INTERNAL_ERROR = {
  ok: false,
  error: 'internal_error',
  message: 'The server failed to handle this request.',
};

describeBackends('audit completeness', (backend) => {
  let world: SigninWorld;
  let server: TestServer;
  let documents: Server;
  let base: string;
  /** What the metadata document at /client.json says (changed by a test). */
  let document = { client_name: 'Doc Client', redirect_uris: [TEST_REDIRECT] };

  const admin = (method: string, path: string, body?: unknown) =>
    call(server.url, method, path, { key: server.adminKey, ...(body === undefined ? {} : { body }) });
  const events = async (query = '') => {
    const reply = await admin('GET', `/admin/audit${query}`);
    expect(reply.status).toBe(200);
    return reply.body.events as Array<Record<string, unknown>>;
  };
  const sql = (text: string) => server.app.deps.db.prisma.$executeRawUnsafe(text);
  const systemEvent = (action: string, target: string, details: Record<string, unknown>) => ({
    id: expect.stringMatching(/^\d+$/),
    at: expect.any(String),
    actor: 'system',
    action,
    target,
    details,
    hash: expect.stringMatching(/^[0-9a-f]{64}$/),
  });

  beforeAll(async () => {
    world = await startSigninWorld(backend.name);
    server = world.harness.server;
    documents = createServer((req, res) => {
      if (req.url !== '/client.json') {
        res.writeHead(404);
        return res.end();
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ client_id: `${base}/client.json`, ...document }));
    });
    await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(documents.address() as AddressInfo).port}`;
  }, 120_000);

  afterAll(async () => {
    documents?.closeAllConnections();
    documents?.close();
    await world?.close();
  });

  it('records each connection an app takes with it when it is deleted', async () => {
    const registered = await admin('PUT', '/admin/apps/leaving', {
      provider: 'acme.leaving',
      baseUrl: 'https://api.leaving.example',
      openapi: {
        openapi: '3.1.0',
        info: { title: 'Leaving', version: '1' },
        paths: { '/me': { get: { operationId: 'getMe', responses: { 200: { description: 'ok' } } } } },
      },
      auth: {
        type: 'oauth2',
        authorizationUrl: 'https://auth.leaving.example/authorize',
        tokenUrl: 'https://auth.leaving.example/token',
        clientId: 'leaving-client',
        clientSecret: 'leaving-secret-do-not-leak',
        scopes: ['read'],
      },
    });
    expect(registered.status).toBe(200);
    const agent = await provisionAgent(server, ['tools:execute']);
    for (const [id, userId] of [
      ['conn_leaving_a', 'user-a'],
      ['conn_leaving_b', 'user-b'],
    ] as const)
      await server.app.deps.db.prisma.connection.create({
        data: {
          id,
          clientId: agent.clientId,
          userId,
          appId: 'leaving',
          status: 'active',
          scopes: ['read'],
          credential: new Uint8Array([1, 2, 3]),
        },
      });
    expect((await admin('DELETE', '/admin/apps/leaving')).status).toBe(200);
    const connection = (id: string, userId: string) =>
      systemEvent('connection.deleted', id, {
        clientId: agent.clientId,
        userId,
        appId: 'leaving',
        appDeleted: true,
      });
    expect((await events()).slice(0, 3)).toEqual([
      systemEvent('app.deleted', 'leaving', {}),
      connection('conn_leaving_b', 'user-b'),
      connection('conn_leaving_a', 'user-a'),
    ]);
    expect(await server.app.deps.db.prisma.connection.count({ where: { appId: 'leaving' } })).toBe(0);
    expect(await admin('GET', '/admin/audit/verify')).toMatchObject({ status: 200, body: { ok: true } });
  });

  it('records a client that registers itself (RFC 7591) as created by the server', async () => {
    const uris = ['http://127.0.0.1:33418/callback', 'https://app.example/cb'];
    const reply = await call(server.url, 'POST', '/oauth2/register', {
      body: { client_name: 'Self Registered', redirect_uris: uris },
    });
    expect(reply.status).toBe(201);
    const [newest] = await events();
    expect(newest).toEqual(
      systemEvent('client.created', reply.body.client_id, {
        name: 'Self Registered',
        registration: 'dynamic',
        redirectUris: uris,
      }),
    );
    expect(await admin('GET', '/admin/audit/verify')).toMatchObject({ status: 200, body: { ok: true } });
  });

  it('records a metadata-document client when first read, and what changed when read again', async () => {
    const url = `${base}/client.json`;
    const authorize = await fetch(authorizeUrl(world.url, url, pkcePair().challenge), { redirect: 'manual' });
    expect(authorize.status).toBeLessThan(400);
    const [created] = await events();
    const clientId = created?.target as string;
    expect(created).toEqual(
      systemEvent('client.created', expect.stringMatching(/^cli_/), {
        name: 'Doc Client',
        registration: 'metadata_document',
        url,
        redirectUris: [TEST_REDIRECT],
      }),
    );

    // The document changes; read again once its time is up (a fresh reader: the server's caches
    // hold the old one for a while).
    document = { client_name: 'Doc Client 2', redirect_uris: ['https://doc.example/cb'] };
    const later = manualClock(world.harness.clock.now() + METADATA_DOCUMENT_TTL_MS + 1);
    const fetcher = new MetadataDocumentFetcher(true);
    try {
      const reader = new SigninClients(server.app.deps.db.prisma, later, fetcher);
      const resolved = await reader.resolve(url);
      expect(resolved).toEqual({
        ok: true,
        value: { clientId, publicId: url, name: 'Doc Client 2', redirectUris: ['https://doc.example/cb'] },
      });
      // Read once more, unchanged: no event.
      const again = new SigninClients(
        server.app.deps.db.prisma,
        manualClock(later.now() + METADATA_DOCUMENT_TTL_MS + 1),
        fetcher,
      );
      expect((await again.resolve(url)).ok).toBe(true);
    } finally {
      await fetcher.close();
    }
    expect((await events('?limit=4')).slice(0, 3)).toEqual([
      systemEvent('redirect_uri.removed', clientId, { uri: TEST_REDIRECT }),
      systemEvent('redirect_uri.added', clientId, { uri: 'https://doc.example/cb' }),
      systemEvent('client.renamed', clientId, { name: 'Doc Client 2', url }),
    ]);
    expect((await events('?limit=4'))[3]).toEqual(created);
  });

  it('keeps no administrative change whose audit event the database refuses', async () => {
    const agent = await provisionAgent(server, ['tools:execute'], { redirectUri: 'https://kept.example/cb' });
    await registerApp(server, 'kept', {
      provider: 'acme.kept',
      openapi: world.harness.upstream.openapi,
      auth: { type: 'none' },
    });
    const clientsBefore = (await admin('GET', '/admin/clients')).body;
    const keysBefore = (await admin('GET', `/admin/clients/${agent.clientId}/api-keys`)).body;
    const before = await events();

    await sql(`CREATE FUNCTION refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'audit insert refused by the test'; END $$`);
    await sql(
      'CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_events FOR EACH ROW EXECUTE FUNCTION refuse_audit()',
    );
    try {
      const changes: Array<[string, string, unknown?]> = [
        ['POST', '/admin/clients', { name: 'never kept' }],
        ['POST', `/admin/clients/${agent.clientId}/redirect-uris`, { uri: 'https://never.example/cb' }],
        [
          'DELETE',
          `/admin/clients/${agent.clientId}/redirect-uris?uri=${encodeURIComponent('https://kept.example/cb')}`,
        ],
        ['POST', `/admin/clients/${agent.clientId}/api-keys`, { name: 'never', scopes: ['tools:execute'] }],
        ['DELETE', `/admin/api-keys/${agent.keyId}`],
        [
          'PUT',
          '/admin/apps/never',
          { provider: 'acme.never', openapi: world.harness.upstream.openapi, auth: { type: 'none' } },
        ],
        ['DELETE', '/admin/apps/kept'],
      ];
      for (const [method, path, body] of changes) {
        const reply = await admin(method, path, body);
        expect([method, path, reply.status, reply.body]).toEqual([method, path, 500, INTERNAL_ERROR]);
      }
      const registered = await call(server.url, 'POST', '/oauth2/register', {
        body: { client_name: 'never kept either', redirect_uris: ['https://never.example/cb'] },
      });
      expect(registered.status).toBe(500);
    } finally {
      await sql('DROP TRIGGER refuse_audit ON audit_events');
      await sql('DROP FUNCTION refuse_audit()');
    }

    expect((await admin('GET', '/admin/clients')).body).toEqual(clientsBefore);
    expect((await admin('GET', `/admin/clients/${agent.clientId}/api-keys`)).body).toEqual(keysBefore);
    expect((await admin('GET', `/admin/clients/${agent.clientId}/redirect-uris`)).body).toEqual({
      uris: ['https://kept.example/cb'],
    });
    expect((await admin('GET', '/admin/apps/never')).status).toBe(404);
    expect((await admin('GET', '/admin/apps/kept')).status).toBe(200);
    // The key whose revocation failed still works (and was not evicted as revoked).
    const tools = await call(server.url, 'GET', '/tools', { key: agent.apiKey, clientId: agent.clientId });
    expect(tools.status).toBe(200);
    expect(await events()).toEqual(before);
    expect((await admin('GET', '/admin/audit/verify')).body).toEqual({ ok: true, checked: before.length });
  });
});
