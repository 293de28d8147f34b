/**
 * Large documents (docs/reference.md "Administration", §6): registering one never stalls the server, the compiled
 * catalog is stored so no server compiles it again, and PUT /admin/apps alone accepts bodies up to
 * MAX_DOCUMENT_BYTES.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unpackText } from '../../server/catalog/packing.ts';
import { provisionAgent } from '../support/agent.ts';
import { createTestDatabase } from '../support/db.ts';
import { type EchoUpstream, startEchoUpstream } from '../support/echo-upstream.ts';
import { largeDocument } from '../support/fixtures/openapi/real-cases.ts';
import { call, startServer, type TestServer } from '../support/server.ts';

describe('large documents', () => {
  let server: TestServer;
  let upstream: EchoUpstream;

  beforeAll(async () => {
    [server, upstream] = await Promise.all([startServer('pglite'), startEchoUpstream()]);
  });
  afterAll(async () => {
    await server?.close();
    await upstream?.close();
  });

  it('keeps answering /healthz quickly while a document of thousands of operations registers', async () => {
    // A first registration warms what every server pays once (Prisma's first upsert plan).
    const warm = await call(server.url, 'PUT', '/admin/apps/warm', {
      key: server.adminKey,
      body: { provider: 'acme.warm', openapi: largeDocument(upstream.url, 1), auth: { type: 'none' } },
    });
    expect(warm.status).toBe(200);
    const document = largeDocument(upstream.url, 3000);
    let done = false;
    const startedAt = performance.now();
    const registration = call(server.url, 'PUT', '/admin/apps/large', {
      key: server.adminKey,
      body: { provider: 'acme.large', openapi: document, auth: { type: 'none' } },
    }).finally(() => {
      done = true;
    });
    // Back-to-back probes, each timed from send to answer, for as long as the registration runs.
    const latencies: number[] = [];
    while (!done) {
      const started = performance.now();
      const health = await fetch(`${server.url}/healthz`);
      await health.text();
      latencies.push(performance.now() - started);
    }
    const reply = await registration;
    const registrationMs = performance.now() - startedAt;
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.tools).toHaveLength(3000);
    expect(latencies.length).toBeGreaterThan(5);
    // Relative, so a loaded machine slows both sides. Measured (PGlite, load 15–18 on 2 cores):
    // before issue 23 item 11 the longest wait was 4.2 s of a 17.6 s registration (the body parsed
    // on the event loop, the tool rows written in large statements that never let a request in),
    // after it 0.4 s of 17.3 s (1/43); a tenth leaves room for a loaded machine and fails the former.
    expect(Math.max(...latencies)).toBeLessThan(registrationMs / 10);
  }, 120_000);

  it('stores the compiled catalog: another server reads it without compiling, and a missing one is rebuilt', async () => {
    // One PGlite folder serves one process at a time: the servers take turns on it.
    const database = await createTestDatabase('pglite');
    const on = (url: string) => startServer('pglite', { databaseUrl: url });
    try {
      const first = await on(database.url);
      const agent = await provisionAgent(first, ['tools:execute:large']);
      const put = await call(first.url, 'PUT', '/admin/apps/large', {
        key: first.adminKey,
        body: { provider: 'acme.large', openapi: largeDocument(upstream.url, 50), auth: { type: 'none' } },
      });
      expect([put.status, first.app.deps.apps.compiler.jobs]).toEqual([200, 1]);
      await first.close();

      const list = (target: TestServer) =>
        call(target.url, 'GET', '/tools?appId=large&q=replaceThing49', {
          key: agent.apiKey,
          clientId: agent.clientId,
        });
      const second = await on(database.url);
      expect((await list(second)).body.tools.map((tool: { name: string }) => tool.name)[0]).toBe(
        'replaceThing49',
      );
      expect(second.app.deps.apps.compiler.jobs).toBe(0);

      // A catalog of an older format (here: none at all, as an older version stored it: no search
      // segment, no tool rows) is compiled again, once, and stored back with both.
      const prisma = second.app.deps.db.prisma;
      await prisma.app.update({ where: { id: 'large' }, data: { catalog: null, search: null } });
      await prisma.catalogTool.deleteMany({ where: { appId: 'large' } });
      const { updatedAt } = await prisma.app.findUniqueOrThrow({
        where: { id: 'large' },
        select: { updatedAt: true },
      });
      await second.close();

      const third = await on(database.url);
      expect((await list(third)).body.tools.map((tool: { name: string }) => tool.name)[0]).toBe(
        'replaceThing49',
      );
      expect(third.app.deps.apps.compiler.jobs).toBe(1);
      expect(await third.app.deps.db.prisma.catalogTool.count({ where: { appId: 'large' } })).toBe(50);
      const row = await third.app.deps.db.prisma.app.findUniqueOrThrow({
        where: { id: 'large' },
        select: { catalog: true, updatedAt: true },
      });
      expect(unpackText(row.catalog ?? '')).toMatch(/^\{"format":/);
      expect(row.updatedAt).toEqual(updatedAt);
      await third.close();
    } finally {
      await database.drop();
    }
    // Three servers start one after the other on one PGlite folder.
  }, 120_000);
});

describe('a registration body read on the compile worker', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startServer('pglite');
  });
  afterAll(async () => {
    await server?.close();
  });

  const put = (options: Parameters<typeof call>[3]) =>
    call(server.url, 'PUT', '/admin/apps/read', {
      key: server.adminKey,
      ...options,
      headers: { 'content-type': 'application/json', ...options?.headers },
    });
  const document = () => largeDocument('https://api.example.test', 200);
  const shapeError = (issues: Array<{ path: string; message: string }>) => ({
    ok: false,
    error: 'invalid_request',
    message: 'The request does not have the expected shape.',
    issues,
  });

  it('answers malformed and too deeply nested bodies as every route does, before authentication', async () => {
    const valid = JSON.stringify({ provider: 'acme.read', openapi: document(), auth: { type: 'none' } });
    for (const key of [server.adminKey, undefined]) {
      const malformed = await put({ key, raw: valid.slice(0, -1) });
      expect([malformed.status, malformed.body]).toEqual([
        400,
        {
          ok: false,
          error: 'invalid_request',
          message: 'The body is not valid JSON.',
          issues: [{ path: '', message: 'Malformed JSON.' }],
        },
      ]);
      const deep = await put({
        key,
        raw: `{"provider":"acme.read","x":${'['.repeat(200)}${']'.repeat(200)}}`,
      });
      expect([deep.status, deep.body]).toEqual([
        400,
        {
          ok: false,
          error: 'invalid_request',
          message: 'The body is nested too deeply.',
          issues: [{ path: '', message: 'JSON nested deeper than 128 levels.' }],
        },
      ]);
    }
  });

  it('compiles nothing for a caller without a key, and checks the rest of the body as before', async () => {
    const jobs = server.app.deps.apps.compiler.jobs;
    const body = { provider: 'acme.read', openapi: document(), auth: { type: 'none' } };
    const anonymous = await put({ key: undefined, body });
    expect([anonymous.status, anonymous.body.error]).toEqual([401, 'invalid_api_key']);

    const provider = await put({ body: { ...body, provider: 'Not A Provider' } });
    expect([provider.status, provider.body]).toEqual([
      400,
      shapeError([
        { path: '/provider', message: 'Must be <vendor>.<product>, lowercase, e.g. github.rest.' },
      ]),
    ]);
    const missingAuth = await put({ body: { provider: 'acme.read', openapi: document() } });
    expect([
      missingAuth.status,
      missingAuth.body.issues.map((issue: { path: string }) => issue.path),
    ]).toEqual([400, ['/auth']]);
    expect(server.app.deps.apps.compiler.jobs).toBe(jobs);

    // A document of the wrong kind is refused for its kind, as it was when parsed on the event loop.
    for (const openapi of [42, '', [document()], null]) {
      const reply = await put({ body: { ...body, openapi } });
      expect([reply.status, reply.body.error, reply.body.issues[0].path]).toEqual([
        400,
        'invalid_request',
        '/openapi',
      ]);
    }
    for (const raw of [JSON.stringify([body]), JSON.stringify('text')]) {
      const reply = await put({ raw });
      expect([reply.status, reply.body.error]).toEqual([400, 'invalid_request']);
    }
    expect(server.app.deps.apps.compiler.jobs).toBe(jobs);
  });

  it('registers the document the body holds, as an object or as text', async () => {
    const asObject = await put({
      body: { provider: 'acme.read', openapi: document(), auth: { type: 'none' } },
    });
    expect([asObject.status, asObject.body.tools.length, asObject.body.tools[199]]).toEqual([
      200,
      200,
      'replaceThing199',
    ]);
    const asText = await put({
      body: {
        provider: 'acme.read',
        openapi: JSON.stringify(largeDocument('https://api.example.test', 3)),
        auth: { type: 'none' },
      },
    });
    expect([asText.status, asText.body]).toEqual([
      200,
      { appId: 'read', tools: ['replaceThing0', 'replaceThing1', 'replaceThing2'], skipped: [] },
    ]);
    // Stored as registered: the app lists its three tools from the stored catalog.
    const app = await call(server.url, 'GET', '/admin/apps/read', { key: server.adminKey });
    expect([app.status, app.body.tools]).toEqual([200, ['replaceThing0', 'replaceThing1', 'replaceThing2']]);
  });
});

describe('MAX_DOCUMENT_BYTES', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startServer('pglite', { env: { MAX_BODY_BYTES: '1024', MAX_DOCUMENT_BYTES: '65536' } });
  });
  afterAll(async () => {
    await server?.close();
  });

  const registration = (bytes: number) => {
    const document = largeDocument('https://api.example.test', 1) as { info: Record<string, unknown> };
    const base = JSON.stringify({ provider: 'acme.big', openapi: document, auth: { type: 'none' } }).length;
    document.info.description = 'x'.repeat(Math.max(0, bytes - base - 20));
    return { provider: 'acme.big', openapi: document, auth: { type: 'none' } };
  };

  it('lets an app registration above MAX_BODY_BYTES through, up to MAX_DOCUMENT_BYTES', async () => {
    const body = registration(40_000);
    expect(JSON.stringify(body).length).toBeGreaterThan(30_000);
    const reply = await call(server.url, 'PUT', '/admin/apps/big', { key: server.adminKey, body });
    expect([reply.status, reply.body.tools]).toEqual([200, ['replaceThing0']]);
  });

  it('answers 413 payload_too_large with the document limit above it, and keeps MAX_BODY_BYTES elsewhere', async () => {
    const tooBig = await call(server.url, 'PUT', '/admin/apps/big', {
      key: server.adminKey,
      body: registration(70_000),
    });
    expect([tooBig.status, tooBig.body]).toEqual([
      413,
      { ok: false, error: 'payload_too_large', message: expect.any(String), limit: 65536 },
    ]);
    const client = await call(server.url, 'POST', '/admin/clients', {
      key: server.adminKey,
      body: { name: 'x'.repeat(2000) },
    });
    expect([client.status, client.body.limit]).toEqual([413, 1024]);
  });

  it('defaults to 64 MiB', async () => {
    const defaults = await startServer('pglite');
    try {
      expect(defaults.app.deps.config.maxDocumentBytes).toBe(64 * 1024 * 1024);
    } finally {
      await defaults.close();
    }
  });
});
