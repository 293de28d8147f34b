/**
 * App registration end to end (docs/reference.md "Administration"): PUT/GET/DELETE /admin/apps over real HTTP, on every
 * backend, with the test upstream's OpenAPI documents.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oauth2Auth } from '../proxy/helpers.ts';
import { provisionAgent, proxy } from '../support/agent.ts';
import { describeBackends } from '../support/db.ts';
import { call, type Reply, startServer, type TestServer } from '../support/server.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';
import { UPSTREAM_30_TOOLS, UPSTREAM_TOOLS } from '../support/upstream-openapi.ts';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const API_KEY_SECRET = 'upstream-api-key-value-do-not-leak';
const CLIENT_SECRET = 'oauth-client-secret-do-not-leak';

/** Every tool of the fixture's 3.1 document, in document order. */
const ALL_TOOLS = [...UPSTREAM_TOOLS];

const REGISTRATION_PROBLEMS = 'The app registration has problems.';
const WRONG_SHAPE = 'The request does not have the expected shape.';

/** A document with one operation `GET /a`, `extra` merged into the operation. */
function operation(extra: Record<string, unknown>): Record<string, unknown> {
  return minimalDocument({
    servers: [{ url: 'https://a.example' }],
    paths: { '/a': { get: { operationId: 'a', responses: { 200: { description: 'a' } }, ...extra } } },
  });
}

function minimalDocument(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'minimal', version: '1' },
    paths: { '/ping': { get: { operationId: 'ping', responses: { 200: { description: 'pong' } } } } },
    ...extra,
  };
}

describeBackends('app registration', (backend) => {
  let server: TestServer;
  let upstream: Upstream;
  /** Every answer of this suite, scanned for secrets at the end. */
  const replies: Reply[] = [];

  beforeAll(async () => {
    [server, upstream] = await Promise.all([startServer(backend.name), startUpstream({ basePath: '/v1' })]);
  });
  afterAll(async () => {
    await server?.close();
    await upstream?.close();
  });

  const admin = async (method: string, path: string, body?: unknown) => {
    const reply = await call(server.url, method, path, { key: server.adminKey, body });
    replies.push(reply);
    return reply;
  };
  const apiKeyRegistration = () => ({
    provider: 'acme.items',
    openapi: upstream.openapi,
    auth: { type: 'api_key', in: 'header', name: 'X-Api-Key', value: API_KEY_SECRET },
  });

  describe('PUT /admin/apps/{appId}', () => {
    it('registers an app and answers its id and tool names in document order', async () => {
      const reply = await admin('PUT', '/admin/apps/items', apiKeyRegistration());
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({ appId: 'items', tools: ALL_TOOLS, skipped: [] });
    });

    it('shows the app without its secret; the base URL defaults to servers[0].url', async () => {
      await admin('PUT', '/admin/apps/items', apiKeyRegistration());
      const reply = await admin('GET', '/admin/apps/items');
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({
        appId: 'items',
        provider: 'acme.items',
        baseUrl: upstream.url,
        auth: { type: 'api_key', in: 'header', name: 'X-Api-Key' },
        tools: ALL_TOOLS,
        skipped: [],
        updatedAt: expect.stringMatching(ISO),
      });
    });

    it('keeps an explicit baseUrl over the document servers', async () => {
      const reply = await admin('PUT', '/admin/apps/explicit-base', {
        provider: 'acme.items',
        baseUrl: 'https://api.acme.example/v2',
        openapi: upstream.openapi,
        auth: { type: 'none' },
      });
      expect(reply.status).toBe(200);
      const shown = await admin('GET', '/admin/apps/explicit-base');
      expect(shown.body).toMatchObject({ baseUrl: 'https://api.acme.example/v2', auth: { type: 'none' } });
    });

    it('shows an oauth2 app without clientSecret, with the defaulted token auth method', async () => {
      const put = await admin('PUT', '/admin/apps/oauthy', {
        provider: 'acme.oauth',
        openapi: upstream.openapi,
        auth: {
          ...oauth2Auth(),
          revocationUrl: 'https://auth.example/revoke',
          extraAuthParams: { prompt: 'consent' },
        },
      });
      expect(put.status).toBe(200);
      expect(put.body).toEqual({ appId: 'oauthy', tools: ALL_TOOLS, skipped: [] });
      const reply = await admin('GET', '/admin/apps/oauthy');
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({
        appId: 'oauthy',
        provider: 'acme.oauth',
        baseUrl: upstream.url,
        auth: {
          type: 'oauth2',
          authorizationUrl: 'https://auth.example/authorize',
          tokenUrl: 'https://auth.example/token',
          revocationUrl: 'https://auth.example/revoke',
          clientId: 'toolgate-client',
          scopes: ['profile:read', 'notes:write'],
          tokenAuthMethod: 'client_secret_basic',
          extraAuthParams: { prompt: 'consent' },
        },
        tools: ALL_TOOLS,
        skipped: [],
        updatedAt: expect.stringMatching(ISO),
      });
    });

    it('accepts an OpenAPI 3.0 document and a YAML text document', async () => {
      const v30 = await admin('PUT', '/admin/apps/v30', {
        provider: 'acme.items',
        openapi: upstream.openapi30,
        auth: { type: 'none' },
      });
      expect(v30.status).toBe(200);
      expect(v30.body).toEqual({
        appId: 'v30',
        tools: [...UPSTREAM_30_TOOLS],
        skipped: [],
      });

      const yaml = [
        'openapi: 3.1.0',
        'info:',
        '  title: yaml app',
        "  version: '1'",
        'servers:',
        `  - url: ${upstream.url}`,
        'paths:',
        '  /text:',
        '    get:',
        '      operationId: readText',
        '      responses:',
        "        '200':",
        '          description: text',
        '  /items/{itemId}:',
        '    get:',
        '      operationId: readItem',
        '      parameters:',
        '        - { name: itemId, in: path, required: true, schema: { type: string } }',
        '      responses:',
        "        '200': { description: item }",
      ].join('\n');
      const put = await admin('PUT', '/admin/apps/yamly', {
        provider: 'acme.yaml',
        openapi: yaml,
        auth: { type: 'none' },
      });
      expect(put.status).toBe(200);
      expect(put.body).toEqual({ appId: 'yamly', tools: ['readText', 'readItem'], skipped: [] });
      const shown = await admin('GET', '/admin/apps/yamly');
      expect(shown.body).toMatchObject({ baseUrl: upstream.url, tools: ['readText', 'readItem'] });

      // The YAML app's tools run like any other.
      const agent = await provisionAgent(server, ['tools:execute:yamly']);
      const ran = await proxy(server, agent, { toolId: 'yamly:::readItem', parameters: { itemId: 'y-1' } });
      expect(ran.status).toBe(200);
      expect(ran.body.data).toEqual({ id: 'y-1', title: 'An item' });
    });

    it('replaces an app: new document, auth and tools take effect at once', async () => {
      const agent = await provisionAgent(server, ['tools:execute:swap']);
      expect(
        await admin('PUT', '/admin/apps/swap', {
          provider: 'acme.items',
          openapi: upstream.openapi,
          auth: { type: 'none' },
        }),
      ).toMatchObject({ status: 200 });
      const before = await admin('GET', '/admin/apps/swap');
      const ran = await proxy(server, agent, { toolId: 'swap:::getText', parameters: {} });
      expect([ran.status, ran.body.data]).toEqual([200, 'hello, world']);

      const replaced = await admin('PUT', '/admin/apps/swap', {
        provider: 'acme.other',
        baseUrl: `${upstream.url}/`,
        openapi: upstream.openapi30,
        auth: { type: 'api_key', in: 'query', name: 'api_key', value: API_KEY_SECRET },
      });
      expect(replaced.status).toBe(200);
      expect(replaced.body).toEqual({
        appId: 'swap',
        tools: [...UPSTREAM_30_TOOLS],
        skipped: [],
      });
      const after = await admin('GET', '/admin/apps/swap');
      expect(after.body).toEqual({
        appId: 'swap',
        provider: 'acme.other',
        baseUrl: `${upstream.url}/`,
        auth: { type: 'api_key', in: 'query', name: 'api_key' },
        tools: [...UPSTREAM_30_TOOLS],
        skipped: [],
        updatedAt: expect.stringMatching(ISO),
      });
      expect(Date.parse(after.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(before.body.updatedAt));

      // The new base URL (its trailing slash dropped) and credential are used at once.
      upstream.reset();
      const item = await proxy(server, agent, { toolId: 'swap:::getItem', parameters: { itemId: 'x' } });
      expect([item.status, item.body.meta?.provider]).toEqual([200, 'acme.other']);
      expect(upstream.requests.map((r) => r.url)).toEqual([`/v1/items/x?api_key=${API_KEY_SECRET}`]);

      const gone = await proxy(server, agent, { toolId: 'swap:::getText', parameters: {} });
      expect(gone.status).toBe(404);
      expect(gone.body).toEqual({
        ok: false,
        error: 'tool_not_found',
        message: expect.any(String),
        tool_id: 'swap:::getText',
      });
      const tools = await call(server.url, 'GET', '/tools', { key: agent.apiKey, clientId: agent.clientId });
      expect(tools.body.tools.map((tool: { toolId: string }) => tool.toolId)).toEqual([
        'swap:::listItems',
        'swap:::createItem',
        'swap:::getItem',
        'swap:::getMe',
      ]);
      replies.push(tools);
    });
  });

  it('takes the appId from the path, never from the body', async () => {
    const reply = await admin('PUT', '/admin/apps/from-path', {
      appId: 'from-body',
      provider: 'acme.items',
      openapi: upstream.openapi30,
      auth: { type: 'none' },
    });
    expect(reply.body).toEqual({
      appId: 'from-path',
      tools: [...UPSTREAM_30_TOOLS],
      skipped: [],
    });
    expect((await admin('GET', '/admin/apps/from-body')).status).toBe(404);
  });

  describe('GET /admin/apps', () => {
    it('lists every app in id order, each as GET /admin/apps/{appId} shows it', async () => {
      await admin('PUT', '/admin/apps/list-b', {
        provider: 'acme.b',
        openapi: upstream.openapi30,
        auth: { type: 'none' },
      });
      await admin('PUT', '/admin/apps/list-a', apiKeyRegistration());
      const reply = await admin('GET', '/admin/apps');
      expect(reply.status).toBe(200);
      expect(Object.keys(reply.body)).toEqual(['apps']);
      const ids = reply.body.apps.map((app: { appId: string }) => app.appId);
      expect(ids).toEqual([...ids].sort());
      expect(ids).toEqual(expect.arrayContaining(['list-a', 'list-b']));
      for (const id of ['list-a', 'list-b']) {
        const one = await admin('GET', `/admin/apps/${id}`);
        expect(reply.body.apps).toContainEqual(one.body);
      }
    });
  });

  describe('DELETE /admin/apps/{appId}', () => {
    it('deletes an app: then GET, DELETE and its tools answer not found', async () => {
      const agent = await provisionAgent(server, ['tools:execute']);
      await admin('PUT', '/admin/apps/doomed', {
        provider: 'acme.items',
        openapi: upstream.openapi,
        auth: { type: 'none' },
      });
      expect((await proxy(server, agent, { toolId: 'doomed:::getText', parameters: {} })).status).toBe(200);

      const prisma = server.app.deps.db.prisma;
      await prisma.connection.create({
        data: {
          id: 'con_doomed',
          clientId: agent.clientId,
          userId: 'u-1',
          appId: 'doomed',
          status: 'active',
          scopes: [],
          credential: new Uint8Array([1, 2, 3]),
        },
      });

      const deleted = await admin('DELETE', '/admin/apps/doomed');
      expect(deleted.status).toBe(200);
      expect(deleted.body).toEqual({ ok: true });

      const notFound = {
        ok: false,
        error: 'app_not_found',
        message: 'No app doomed is registered.',
        app_id: 'doomed',
      };
      const get = await admin('GET', '/admin/apps/doomed');
      expect([get.status, get.body]).toEqual([404, notFound]);
      const again = await admin('DELETE', '/admin/apps/doomed');
      expect([again.status, again.body]).toEqual([404, notFound]);
      const list = await admin('GET', '/admin/apps');
      expect(list.body.apps.map((app: { appId: string }) => app.appId)).not.toContain('doomed');
      // Its grants go with it.
      expect(await prisma.connection.count({ where: { appId: 'doomed' } })).toBe(0);

      const call404 = await proxy(server, agent, { toolId: 'doomed:::getText', parameters: {} });
      expect(call404.status).toBe(404);
      expect(call404.body).toEqual({
        ok: false,
        error: 'tool_not_found',
        message: expect.any(String),
        tool_id: 'doomed:::getText',
      });
    });

    it('answers 404 app_not_found with app_id for an app never registered', async () => {
      const reply = await admin('GET', '/admin/apps/never');
      expect(reply.status).toBe(404);
      expect(reply.body).toEqual({
        ok: false,
        error: 'app_not_found',
        message: 'No app never is registered.',
        app_id: 'never',
      });
    });
  });

  describe('invalid registrations', () => {
    const invalid = (issues: unknown[], message = REGISTRATION_PROBLEMS) => ({
      ok: false,
      error: 'invalid_request',
      message,
      issues,
    });
    const servers = () => [{ url: upstream.url }];

    const nothingServable = (reason: string, pointer = '/openapi/paths/~1a/get') => [
      { path: pointer, message: `No operation can be served: ${reason}` },
    ];

    it.each([
      [
        'a Swagger 2.0 document without operations',
        { swagger: '2.0', info: { title: 't', version: '1' }, paths: {} },
        [
          {
            path: '/openapi/paths',
            message:
              'The document defines no operation (paths is missing or empty), so it would give no tools.',
          },
        ],
      ],
      [
        'a document whose only operation has an external reference',
        operation({ parameters: [{ $ref: 'https://evil.example/p.json' }] }),
        nothingServable(
          'Its parameter reference "https://evil.example/p.json" can\'t be resolved inside the document.',
        ),
      ],
      [
        'a document without operations',
        minimalDocument({ servers: [{ url: 'https://a.example' }], paths: {} }),
        [
          {
            path: '/openapi/paths',
            message:
              'The document defines no operation (paths is missing or empty), so it would give no tools.',
          },
        ],
      ],
      [
        'a document whose only parameter schema is not a JSON Schema',
        operation({ parameters: [{ name: 'x', in: 'query', schema: { type: 'string', minLength: -1 } }] }),
        nothingServable(
          'Its parameter schema is not a valid JSON Schema (at /properties/x/minLength: Must be at least 0).',
        ),
      ],
      [
        'a document whose only parameter is in an unknown location',
        operation({ parameters: [{ name: 'x', in: 'body', schema: {} }] }),
        nothingServable('Parameter "x" is in "body", not path, query, header or cookie.'),
      ],
      [
        'a document whose only operation references nothing',
        operation({ parameters: [{ $ref: '#/components/parameters/Nope' }] }),
        nothingServable(
          'Its parameter reference "#/components/parameters/Nope" can\'t be resolved inside the document.',
        ),
      ],
      [
        'a document whose only pattern does not compile',
        operation({ parameters: [{ name: 'x', in: 'query', schema: { type: 'string', pattern: '(' } }] }),
        nothingServable('Its parameter schema has a pattern that is not a regular expression: "(".'),
      ],
      [
        'paths that are not an object',
        { openapi: '3.1.0', info: { title: 't', version: '1' }, paths: [] },
        [
          {
            path: '/openapi/paths',
            message:
              'The document defines no operation (paths is missing or empty), so it would give no tools.',
          },
        ],
      ],
      [
        'an unsupported OpenAPI version',
        { ...minimalDocument(), openapi: '4.0.0' },
        [
          {
            path: '/openapi/openapi',
            message: 'openapi must be an OpenAPI version 3.0.x or 3.1.x, such as "3.1.0" (or swagger "2.0").',
          },
        ],
      ],
      [
        'a YAML alias bomb',
        [
          'a: &a ["x","x","x","x","x","x","x","x","x","x"]',
          'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]',
          'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]',
          'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]',
          'e: [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]',
        ].join('\n'),
        [{ path: '/openapi', message: expect.stringMatching(/^The document is neither JSON nor YAML: /) }],
      ],
      [
        'YAML text that does not parse',
        'openapi: [',
        [{ path: '/openapi', message: expect.stringMatching(/^The document is neither JSON nor YAML: /) }],
      ],
    ])('refuses %s, with issues pointing into the registration', async (_label, openapi, issues) => {
      const reply = await admin('PUT', '/admin/apps/bad', {
        provider: 'acme.bad',
        openapi,
        auth: { type: 'none' },
      });
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual(invalid(issues));
      expect((await admin('GET', '/admin/apps/bad')).status).toBe(404);
    });

    it('registers what real documents get wrong, and says what it left out', async () => {
      const reply = await admin('PUT', '/admin/apps/imperfect', {
        provider: 'acme.imperfect',
        openapi: {
          openapi: '3.1.0',
          servers: [{ url: 'https://a.example' }],
          paths: {
            '/a': { get: { operationId: 'same', responses: { 200: { description: 'a' } } } },
            '/b': { get: { operationId: 'same', responses: { 200: { description: 'b' } } } },
            '/c': { get: { operationId: 'bad id', responses: { 200: { description: 'c' } } } },
            '/d/{id}': { get: { operationId: 'undeclared', responses: { 200: { description: 'd' } } } },
            '/e': {
              post: {
                operationId: 'xml',
                requestBody: { required: true, content: { 'application/xml': { schema: {} } } },
                responses: { 200: { description: 'e' } },
              },
            },
            '/f': {
              get: {
                operationId: 'broken',
                parameters: [{ $ref: '#/components/parameters/Nope' }],
                responses: { 200: { description: 'f' } },
              },
            },
          },
        },
        auth: { type: 'none' },
      });
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({
        appId: 'imperfect',
        tools: ['same', 'same_2', 'bad_id', 'undeclared', 'xml'],
        skipped: [
          {
            method: 'GET',
            path: '/f',
            operationId: 'broken',
            reason:
              'Its parameter reference "#/components/parameters/Nope" can\'t be resolved inside the document.',
          },
        ],
      });
      const shown = await admin('GET', '/admin/apps/imperfect');
      expect([shown.body.tools, shown.body.skipped]).toEqual([reply.body.tools, reply.body.skipped]);
    });

    it('refuses a document with no absolute servers[0].url when the registration has no baseUrl', async () => {
      for (const extra of [{}, { servers: [{ url: '/v1' }] }]) {
        const reply = await admin('PUT', '/admin/apps/nobase', {
          provider: 'acme.bad',
          openapi: minimalDocument(extra),
          auth: { type: 'none' },
        });
        expect(reply.status).toBe(400);
        expect(reply.body).toEqual(
          invalid([
            {
              path: '/baseUrl',
              message: 'A base URL is required: the OpenAPI document has no absolute http(s) servers[0].url.',
            },
          ]),
        );
      }
      // The same document with a baseUrl in the registration is fine.
      const fixed = await admin('PUT', '/admin/apps/nobase', {
        provider: 'acme.ok',
        baseUrl: upstream.url,
        openapi: minimalDocument(),
        auth: { type: 'none' },
      });
      expect(fixed.body).toEqual({ appId: 'nobase', tools: ['ping'], skipped: [] });
    });

    it.each([
      ['uppercase', 'GitHub.rest'],
      ['no dot', 'github'],
      ['a space', 'acme. demo'],
    ])('refuses a provider label with %s', async (_label, provider) => {
      const reply = await admin('PUT', '/admin/apps/badprov', {
        provider,
        openapi: upstream.openapi,
        auth: { type: 'none' },
      });
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual(
        invalid(
          [{ path: '/provider', message: 'Must be <vendor>.<product>, lowercase, e.g. github.rest.' }],
          WRONG_SHAPE,
        ),
      );
    });

    it.each([
      ['a leading dash', '-app'],
      ['a character outside the set', 'bad!id'],
      ['129 characters', `a${'b'.repeat(128)}`],
      ['a colon', 'a:b'],
    ])('refuses an appId in the path with %s', async (_label, appId) => {
      const reply = await admin('PUT', `/admin/apps/${encodeURIComponent(appId)}`, {
        provider: 'acme.items',
        openapi: upstream.openapi,
        auth: { type: 'none' },
      });
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual(
        invalid([{ path: '/appId', message: 'Must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$.' }], WRONG_SHAPE),
      );
      const get = await admin('GET', `/admin/apps/${encodeURIComponent(appId)}`);
      expect([get.status, get.body.issues]).toEqual([400, [{ path: '/appId', message: expect.any(String) }]]);
    });

    it('refuses bad auth blocks and base URLs at their pointers', async () => {
      const base = { provider: 'acme.items', openapi: upstream.openapi };
      const cases: [unknown, string[]][] = [
        [{ ...base, auth: { type: 'api_key', in: 'body', name: 'X-Key', value: 'v' } }, ['/auth/in']],
        [{ ...base, auth: { type: 'api_key', in: 'header', name: 'X-Key' } }, ['/auth/value']],
        [{ ...base, auth: { type: 'basic' } }, ['/auth/type']],
        [{ ...base, auth: { ...oauth2Auth(), tokenUrl: 'ftp://auth.example/token' } }, ['/auth/tokenUrl']],
        [{ ...base, auth: { ...oauth2Auth(), clientSecret: undefined } }, ['/auth/clientSecret']],
        [{ ...base, baseUrl: 'file:///etc/passwd', auth: { type: 'none' } }, ['/baseUrl']],
        [{ ...base, auth: { type: 'none' }, openapi: 42 }, ['/openapi']],
        [{ auth: { type: 'none' } }, ['/provider', '/openapi']],
      ];
      for (const [body, paths] of cases) {
        const reply = await admin('PUT', '/admin/apps/badauth', body);
        expect(reply.status).toBe(400);
        expect(reply.body).toEqual(
          invalid(
            paths.map((path) => ({ path, message: expect.any(String) })),
            WRONG_SHAPE,
          ),
        );
      }
      expect((await admin('GET', '/admin/apps/badauth')).status).toBe(404);
    });

    it('keeps the stored app when a replacement is refused', async () => {
      await admin('PUT', '/admin/apps/kept', {
        provider: 'acme.items',
        openapi: upstream.openapi30,
        auth: { type: 'none' },
      });
      const refused = await admin('PUT', '/admin/apps/kept', {
        provider: 'acme.items',
        openapi: minimalDocument({ servers: servers(), paths: {} }),
        auth: { type: 'none' },
      });
      expect(refused.status).toBe(400);
      expect((await admin('GET', '/admin/apps/kept')).body.tools).toEqual([...UPSTREAM_30_TOOLS]);
    });
  });

  describe('authorization', () => {
    it('answers 401 without a key and 403 rbac_denied (scope admin) for an agent key', async () => {
      const none = await call(server.url, 'PUT', '/admin/apps/x', { body: apiKeyRegistration() });
      expect(none.status).toBe(401);
      expect(none.body).toEqual({
        ok: false,
        error: 'invalid_api_key',
        message: 'The API key is missing, malformed, unknown or revoked.',
      });
      const agent = await provisionAgent(server, ['tools:execute']);
      for (const [method, path] of [
        ['PUT', '/admin/apps/x'],
        ['GET', '/admin/apps'],
        ['GET', '/admin/apps/items'],
        ['DELETE', '/admin/apps/items'],
      ] as const) {
        const reply = await call(server.url, method, path, {
          key: agent.apiKey,
          clientId: agent.clientId,
          body: method === 'PUT' ? apiKeyRegistration() : undefined,
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
  });

  describe('secrets', () => {
    it('stores the api_key value and the clientSecret only envelope-encrypted', async () => {
      await admin('PUT', '/admin/apps/sealed-key', apiKeyRegistration());
      await admin('PUT', '/admin/apps/sealed-oauth', {
        provider: 'acme.oauth',
        openapi: upstream.openapi,
        auth: oauth2Auth(),
      });
      const rows = await server.app.deps.db.prisma.$queryRawUnsafe<Record<string, unknown>[]>(
        'SELECT * FROM apps WHERE id IN ($1, $2) ORDER BY id',
        'sealed-key',
        'sealed-oauth',
      );
      expect(rows).toHaveLength(2);
      for (const row of rows) {
        const secret = row.id === 'sealed-key' ? API_KEY_SECRET : CLIENT_SECRET;
        const sealed = row.auth_secret;
        expect(sealed).toBeInstanceOf(Uint8Array);
        const bytes = Buffer.from(sealed as Uint8Array);
        expect(bytes.length).toBeGreaterThan(secret.length);
        for (const encoding of ['utf8', 'latin1', 'hex', 'base64'] as const) {
          expect(bytes.toString(encoding)).not.toContain(Buffer.from(secret).toString(encoding));
        }
        const text = JSON.stringify(row, (_key, value) =>
          value instanceof Uint8Array ? Buffer.from(value).toString('latin1') : value,
        );
        expect(text).not.toContain(secret);
        // It opens with the app's envelope context (and with no other app's).
        const opened = await server.app.deps.apps.get(String(row.id));
        expect(await opened?.secret()).toBe(secret);
      }
    });

    it('never shows a secret in any answer or log line', async () => {
      const agent = await provisionAgent(server, ['tools:execute']);
      replies.push(await call(server.url, 'GET', '/tools', { key: agent.apiKey, clientId: agent.clientId }));
      replies.push(await admin('GET', '/admin/apps'));
      expect(replies.length).toBeGreaterThan(20);
      for (const reply of replies) {
        expect(reply.text).not.toContain(API_KEY_SECRET);
        expect(reply.text).not.toContain(CLIENT_SECRET);
        expect(reply.text).not.toMatch(/"(value|clientSecret)"/);
      }
      const logs = server.logs.join('');
      expect(logs).not.toContain(API_KEY_SECRET);
      expect(logs).not.toContain(CLIENT_SECRET);
    });
  });
});
