/** GET /tools end to end (docs/reference.md "Agent endpoints"): the catalog an agent reads, filtered by the key's scopes. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Agent, provisionAgent, registerApp } from '../support/agent.ts';
import { describeBackends } from '../support/db.ts';
import type { TestServer } from '../support/server.ts';
import { UPSTREAM_30_TOOLS, UPSTREAM_TOOLS } from '../support/upstream-openapi.ts';
import { startWorld, type World } from '../support/world.ts';
import { oauth2Auth } from './helpers.ts';

const DIALECT = 'https://json-schema.org/draft/2020-12/schema';

/** The 3.0 fixture document as a `none` app named `demo`: every field of every tool. */
const DEMO_TOOLS = [
  {
    toolId: 'demo:::listItems',
    appId: 'demo',
    name: 'listItems',
    title: 'listItems',
    method: 'GET',
    path: '/items',
    description: 'GET /items',
    parameters: {
      $schema: DIALECT,
      type: 'object',
      properties: {
        tags: { type: 'array', items: { type: 'string' } },
        limit: { type: 'integer', exclusiveMinimum: 0, maximum: 100, examples: [10] },
      },
      additionalProperties: false,
    },
    requiresUserAuth: false,
    scopes: [],
  },
  {
    toolId: 'demo:::createItem',
    appId: 'demo',
    name: 'createItem',
    title: 'createItem',
    method: 'POST',
    path: '/items',
    description: 'POST /items',
    parameters: {
      $schema: DIALECT,
      type: 'object',
      properties: { body: { $ref: '#/$defs/NewItem' } },
      required: ['body'],
      additionalProperties: false,
      // A referenced schema is shared under $defs, not inlined; its read-only `id` is not sent.
      $defs: {
        NewItem: {
          type: 'object',
          required: ['title'],
          properties: {
            title: { type: 'string', minLength: 1 },
            labels: { type: ['array', 'null'], items: { type: 'string' } },
          },
          additionalProperties: false,
        },
      },
    },
    requiresUserAuth: false,
    scopes: [],
  },
  {
    toolId: 'demo:::getItem',
    appId: 'demo',
    name: 'getItem',
    title: 'getItem',
    method: 'GET',
    path: '/items/{itemId}',
    description: 'GET /items/{itemId}',
    parameters: {
      $schema: DIALECT,
      type: 'object',
      properties: { itemId: { type: 'string' } },
      required: ['itemId'],
      additionalProperties: false,
    },
    requiresUserAuth: false,
    // The document declares an OAuth scope, but a `none` app has no user authorization.
    scopes: [],
  },
  {
    toolId: 'demo:::getMe',
    appId: 'demo',
    name: 'getMe',
    title: 'getMe',
    method: 'GET',
    path: '/me',
    description: 'GET /me',
    parameters: { $schema: DIALECT, type: 'object', properties: {}, additionalProperties: false },
    requiresUserAuth: false,
    scopes: [],
  },
];

const FULL_TOOLS = UPSTREAM_TOOLS;

const INVALID_CLIENT = {
  ok: false,
  error: 'invalid_client',
  message: 'X-Service-Client-Id is missing, unknown, or not the client this key was issued to.',
};
const INVALID_API_KEY = {
  ok: false,
  error: 'invalid_api_key',
  message: 'The API key is missing, malformed, unknown or revoked.',
};

describeBackends('GET /tools', (backend) => {
  let world: World<'all' | 'demoOnly'>;
  let server: TestServer;
  let all: Agent;
  let demoOnly: Agent;

  beforeAll(async () => {
    world = await startWorld(backend.name, {
      apps: {
        demo: { provider: 'acme.demo', openapi: (upstream) => upstream.openapi30 },
        keyed: {
          provider: 'acme.keyed',
          auth: { type: 'api_key', in: 'header', name: 'X-Api-Key', value: 'tools-test-secret' },
        },
        oauthy: { provider: 'acme.oauth', auth: oauth2Auth() },
      },
      agents: { all: ['tools:execute'], demoOnly: ['tools:execute:demo'] },
    });
    ({ server } = world);
    ({ all, demoOnly } = world.agents);
  });
  afterAll(async () => {
    await world?.close();
  });

  const tools = (agent: Agent, query = '', headers: Record<string, string> = {}) =>
    world.call('GET', `/tools${query}`, { key: agent.apiKey, clientId: agent.clientId, headers });
  const ids = (body: { tools: { toolId: string }[] }) => body.tools.map((tool) => tool.toolId);

  it('answers each tool with its JSON Schema, exactly as the contract shapes it', async () => {
    const reply = await tools(all, '?appId=demo');
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(reply.body).toEqual({ tools: DEMO_TOOLS });
  });

  it('lists every app the key may execute, in app id order, tools in document order', async () => {
    const reply = await tools(all);
    expect(reply.status).toBe(200);
    expect(ids(reply.body)).toEqual([
      ...DEMO_TOOLS.map((tool) => tool.toolId),
      ...FULL_TOOLS.map((name) => `keyed:::${name}`),
      ...FULL_TOOLS.map((name) => `oauthy:::${name}`),
    ]);
  });

  it('shows only the apps of tools:execute:<appId> scopes', async () => {
    expect(await tools(demoOnly)).toMatchObject({ status: 200, body: { tools: DEMO_TOOLS } });
    const two = await provisionAgent(server, [
      'tools:execute:demo',
      'tools:execute:oauthy',
      'connections:read',
    ]);
    expect(ids((await tools(two)).body)).toEqual([
      ...DEMO_TOOLS.map((tool) => tool.toolId),
      ...FULL_TOOLS.map((name) => `oauthy:::${name}`),
    ]);
  });

  it('answers an empty list to a valid key without an execute scope', async () => {
    const reader = await provisionAgent(server, ['connections:read', 'oauth:initiate']);
    const reply = await tools(reader);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ tools: [] });
  });

  it('filters by the appId query', async () => {
    expect(ids((await tools(all, '?appId=oauthy')).body)).toEqual(
      FULL_TOOLS.map((name) => `oauthy:::${name}`),
    );
    for (const [agent, query] of [
      [all, '?appId=unknown'],
      [demoOnly, '?appId=oauthy'],
      [demoOnly, '?appId=keyed'],
    ] as const) {
      const reply = await tools(agent, query);
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({ tools: [] });
    }
  });

  it('marks oauth2 tools as needing the user, with the OAuth scopes of their operation', async () => {
    const reply = await tools(all, '?appId=oauthy');
    const byName = new Map(reply.body.tools.map((tool: { name: string }) => [tool.name, tool]));
    expect(byName.get('getMe')).toEqual({
      toolId: 'oauthy:::getMe',
      appId: 'oauthy',
      name: 'getMe',
      title: 'The signed-in user',
      method: 'GET',
      path: '/me',
      description: 'The signed-in user',
      parameters: { $schema: DIALECT, type: 'object', properties: {}, additionalProperties: false },
      requiresUserAuth: true,
      scopes: ['profile:read'],
    });
    expect(byName.get('createNote')).toMatchObject({
      requiresUserAuth: true,
      scopes: ['notes:write', 'profile:read'],
    });
    // An operation without security of an oauth2 app still acts for the user, with no scope of its own.
    expect(byName.get('listItems')).toMatchObject({ requiresUserAuth: true, scopes: [] });
  });

  it('marks api_key tools as not needing the user, and hides the credential parameter', async () => {
    const reply = await tools(all, '?appId=keyed');
    for (const tool of reply.body.tools) expect(tool).toMatchObject({ requiresUserAuth: false, scopes: [] });
    const headerKey = reply.body.tools.find((tool: { name: string }) => tool.name === 'getWithHeaderKey');
    expect(headerKey.parameters).toEqual({
      $schema: DIALECT,
      type: 'object',
      properties: {},
      additionalProperties: false,
    });
    expect(reply.text).not.toContain('tools-test-secret');
  });

  it('follows registrations and deletions at once', async () => {
    await registerApp(server, 'late', {
      provider: 'acme.late',
      openapi: world.upstream.openapi30,
      auth: { type: 'none' },
    });
    expect(ids((await tools(all, '?appId=late')).body)).toEqual(
      UPSTREAM_30_TOOLS.map((name) => `late:::${name}`),
    );
    await world.call('DELETE', '/admin/apps/late', { key: server.adminKey });
    expect((await tools(all, '?appId=late')).body).toEqual({ tools: [] });
    expect(ids((await tools(all)).body).some((id: string) => id.startsWith('late:::'))).toBe(false);
  });

  describe('search and paging', () => {
    it('ranks the tools by q (docs/reference.md "Tool search"): the best first, a score on each, none without relevance', async () => {
      const search = async (q: string, more = '') =>
        (await tools(all, `?appId=demo&q=${encodeURIComponent(q)}${more}`)).body.tools.map(
          (tool: { toolId: string; score: number }) => [tool.toolId, tool.score],
        );
      const items = await search('get ITEM');
      // Both words, and the method a "get" asks for, first; then the other item, then the other get.
      expect(items.map(([id]: [string]) => id)).toEqual([
        'demo:::getItem',
        'demo:::listItems',
        'demo:::createItem',
        'demo:::getMe',
      ]);
      expect(items.every(([, score]: [string, number]) => score > 0 && score < 1)).toBe(true);
      expect(items[0][1]).toBeGreaterThan(items[1][1]);
      // An exact tool name (or composite id) comes first, with the highest score.
      expect((await search('createitem'))[0]).toEqual(['demo:::createItem', 1]);
      expect((await search('demo:::getMe'))[0]).toEqual(['demo:::getMe', 1]);
      expect(await search('the of and')).toEqual([]);
      expect(await search('signed-in user')).toEqual([]);
      const across = (await tools(all, '?q=signed-in%20user')).body.tools.map(
        (t: { toolId: string }) => t.toolId,
      );
      expect(across.slice(0, 2).sort()).toEqual(['keyed:::getMe', 'oauthy:::getMe']);
      // Without q the catalog order holds and no score is given.
      const plain = (await tools(all, '?appId=demo&q=%20')).body.tools;
      expect(plain).toEqual(DEMO_TOOLS);
    });

    it('pages with limit and cursor; next_cursor is present only while more tools follow', async () => {
      const everything = ids((await tools(all)).body);
      expect(everything.length).toBeGreaterThan(30);
      const pages: string[][] = [];
      let cursor: string | undefined;
      do {
        const reply = await tools(all, `?limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        expect(reply.status).toBe(200);
        pages.push(ids(reply.body));
        cursor = reply.body.next_cursor;
        if (cursor === undefined) expect(Object.keys(reply.body)).toEqual(['tools']);
      } while (cursor !== undefined);
      expect(pages.flat()).toEqual(everything);
      expect(pages.slice(0, -1).every((page) => page.length === 7)).toBe(true);

      const exact = await tools(all, '?appId=demo&limit=4');
      expect(exact.body).toEqual({ tools: DEMO_TOOLS });
      // A ranked list pages in its order: the pages together are the one long answer.
      const ranked = ids((await tools(all, '?q=get%20items&limit=50')).body);
      expect(ranked.length).toBeGreaterThan(3);
      const paged: string[] = [];
      let next: string | undefined;
      do {
        const reply = await tools(
          all,
          `?q=get%20items&limit=2${next ? `&cursor=${encodeURIComponent(next)}` : ''}`,
        );
        expect(reply.status).toBe(200);
        paged.push(...ids(reply.body));
        next = reply.body.next_cursor;
      } while (next !== undefined);
      expect(paged).toEqual(ranked);
    });

    // Issue 23: an answer the server builds is bounded, whatever the catalog holds.
    it('ends a page at 1,000 tools without limit, and at a bounded size, keeping every tool reachable', async () => {
      const choices = Array.from({ length: 6_000 }, (_, i) => `choice-number-${i}`);
      const paths: Record<string, unknown> = {};
      for (let i = 0; i < 1_100; i += 1)
        paths[`/big/${i}`] = {
          post: {
            operationId: `big${i}`,
            requestBody: {
              content: { 'application/json': { schema: { type: 'string', enum: i < 80 ? choices : ['a'] } } },
            },
            responses: { '200': { description: 'ok' } },
          },
        };
      await registerApp(server, 'big', {
        provider: 'acme.big',
        baseUrl: world.upstream.url,
        openapi: { openapi: '3.0.3', info: { title: 'big', version: '1' }, paths },
        auth: { type: 'none' },
      });
      const pages: { count: number; bytes: number }[] = [];
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const reply = await tools(all, `?appId=big${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        expect(reply.status).toBe(200);
        pages.push({ count: reply.body.tools.length, bytes: reply.text.length });
        seen.push(...ids(reply.body));
        cursor = reply.body.next_cursor;
      } while (cursor !== undefined);
      expect(seen).toEqual(Array.from({ length: 1_100 }, (_, i) => `big:::big${i}`));
      // 80 tools of ~100 KB: the first page stops near 4 MiB; then 1,000 small ones; then the rest.
      expect(pages.length).toBe(4);
      expect(pages.every((page) => page.bytes < 4.5 * 1024 * 1024)).toBe(true);
      expect(pages[0]?.count).toBeLessThan(80);
      expect(pages[2]?.count).toBe(1_000);
      await world.call('DELETE', '/admin/apps/big', { key: server.adminKey });
    });

    it.each([
      ['limit=0', '/limit'],
      ['limit=1001', '/limit'],
      ['limit=abc', '/limit'],
      ['limit=1.5', '/limit'],
      ['limit=5&limit=6', '/limit'],
      ['cursor=not-a-cursor', '/cursor'],
      ['appId=a%20b', '/appId'],
      ['appId=-x', '/appId'],
      ['apps=demo,a%20b', '/apps'],
      ['apps=demo,', '/apps'],
      [`cursor=${Buffer.from('["demo",-1]').toString('base64url')}`, '/cursor'],
    ])('answers 400 invalid_request for %s', async (query, path) => {
      const reply = await tools(all, `?${query}`);
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual({
        ok: false,
        error: 'invalid_request',
        message: expect.any(String),
        issues: [{ path, message: expect.any(String) }],
      });
    });
  });

  describe('authentication', () => {
    it.each([
      ['no Authorization', {}],
      ['a Basic credential', { authorization: 'Basic dXNlcjpwYXNz' }],
      ['an unknown key', { authorization: `Bearer tg_key_${'a'.repeat(20)}_${'b'.repeat(43)}` }],
    ])('answers 401 invalid_api_key for %s', async (_label, headers) => {
      const reply = await world.call('GET', '/tools', { clientId: all.clientId, headers });
      expect(reply.status).toBe(401);
      expect(reply.body).toEqual(INVALID_API_KEY);
    });

    it('answers 401 invalid_api_key for a revoked key', async () => {
      const agent = await provisionAgent(server, ['tools:execute']);
      expect((await tools(agent)).status).toBe(200);
      await world.call('DELETE', `/admin/api-keys/${agent.keyId}`, { key: server.adminKey });
      const reply = await tools(agent);
      expect([reply.status, reply.body]).toEqual([401, INVALID_API_KEY]);
    });

    it('answers 401 invalid_client for a missing, unknown or other client id', async () => {
      const missing = await world.call('GET', '/tools', { key: all.apiKey });
      const unknown = await world.call('GET', '/tools', {
        key: all.apiKey,
        clientId: 'cli_unknownunknown00',
      });
      const other = await world.call('GET', '/tools', { key: all.apiKey, clientId: demoOnly.clientId });
      const empty = await world.call('GET', '/tools', { key: all.apiKey, clientId: '' });
      const admin = await world.call('GET', '/tools', { key: server.adminKey, clientId: all.clientId });
      for (const reply of [missing, unknown, other, empty, admin]) {
        expect(reply.status).toBe(401);
        expect(reply.body).toEqual(INVALID_CLIENT);
      }
    });

    it('checks the key before the client', async () => {
      const reply = await world.call('GET', '/tools', { key: 'nope', clientId: 'cli_unknown' });
      expect([reply.status, reply.body]).toEqual([401, INVALID_API_KEY]);
    });
  });
});
