/**
 * The upstream request never leaves the registered origin and base path (docs/reference.md "Agent endpoints"): hostile
 * parameter values, header injection, and redirects (same origin followed; another origin answered
 * 502 with the 3xx, nothing sent there, no credential ever leaving the app's origin).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { connectionContext } from '../../server/oauth/grants.ts';
import { type Agent, provisionAgent, registerApp } from '../support/agent.ts';
import { describeBackends } from '../support/db.ts';
import type { TestServer } from '../support/server.ts';
import type { Upstream } from '../support/upstream.ts';
import { startWorld, type World } from '../support/world.ts';
import { oauth2Auth, strictlyEncoded } from './helpers.ts';

const API_KEY = 'ssrf-suite-api-key-do-not-leak';
const ACCESS_TOKEN = 'ssrf-suite-access-token-do-not-leak';
const USER = 'user-ssrf';

const HOSTILE_SEGMENTS = [
  '../admin',
  '../../../etc/passwd',
  '..%2Fadmin',
  '%2e%2e',
  '%2e%2e%2fadmin',
  '.%2e',
  '%252e%252e%252f',
  '..;/admin',
  '//evil.host',
  '//evil.host/x',
  '@evil.host',
  'user:pass@evil.host',
  '\\evil.host',
  '..\\..\\admin',
  '\\\\evil.host\\share',
  'http://evil.host/',
  'evil.host:80',
  '?admin=1',
  '#fragment',
  '%00',
  '\u0000x',
  ' ..',
  '.. ',
  '...',
  '%',
];

describeBackends('SSRF: the upstream request stays on the registered origin', (backend) => {
  let world: World;
  let server: TestServer;
  let upstream: Upstream;
  let agent: Agent;

  beforeAll(async () => {
    world = await startWorld(backend.name, { upstream: { basePath: '/v1', apiKey: API_KEY } });
    ({ server, upstream } = world);
    await registerApp(server, 'demo', {
      provider: 'acme.demo',
      openapi: upstream.openapi,
      auth: { type: 'none' },
    });
    await registerApp(server, 'hkey', {
      provider: 'acme.keys',
      openapi: upstream.openapi,
      auth: { type: 'api_key', in: 'header', name: 'X-Api-Key', value: API_KEY },
    });
    await registerApp(server, 'qkey', {
      provider: 'acme.keys',
      openapi: upstream.openapi,
      auth: { type: 'api_key', in: 'query', name: 'api_key', value: API_KEY },
    });
    await registerApp(server, 'oauthy', {
      provider: 'acme.oauth',
      openapi: upstream.openapi,
      auth: oauth2Auth(),
    });
    agent = await provisionAgent(server, ['tools:execute']);

    // A grant for (agent, USER, oauthy), stored as the OAuth flow stores one: sealed, ciphertext only.
    const credential = await server.app.deps.envelope.seal(
      JSON.stringify({ access_token: ACCESS_TOKEN, token_type: 'Bearer', expires_at: null }),
      connectionContext(agent.clientId, USER, 'oauthy'),
    );
    await server.app.deps.db.prisma.connection.create({
      data: {
        id: `con_${randomUUID().replaceAll('-', '')}`,
        clientId: agent.clientId,
        userId: USER,
        appId: 'oauthy',
        status: 'active',
        scopes: ['profile:read', 'notes:write'],
        expiresAt: null,
        credential: new Uint8Array(credential),
      },
    });
    upstream.setAccessToken(ACCESS_TOKEN);
  });
  afterAll(async () => {
    await world?.close();
  });
  beforeEach(() => upstream.reset());

  const run = (
    toolId: string,
    parameters: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) => world.proxy(agent, { toolId, parameters }, headers);
  const cannotBeSent = (toolId: string, path: string, message: string) => ({
    ok: false,
    error: 'invalid_parameters',
    message: 'The parameters cannot be sent to the upstream.',
    tool_id: toolId,
    issues: [{ path, message }],
  });
  const SEGMENT = 'Must not make an empty, "." or ".." path segment: it would address another resource.';
  const FIELD_VALUE = 'Must be printable ASCII text without line breaks or control characters.';

  /** Nothing reached the other origin, and every upstream request stayed under the base path. */
  function expectContained(): void {
    expect(upstream.other.requests).toEqual([]);
    for (const request of upstream.requests) {
      expect(request.path.startsWith('/v1/')).toBe(true);
      expect(request.headers.host).toBe(new URL(upstream.url).host);
    }
  }

  describe('path parameter values', () => {
    it.each(HOSTILE_SEGMENTS.map((value) => [JSON.stringify(value), value]))(
      'keeps %s inside one path segment under the base path',
      async (_label, itemId) => {
        const reply = await run('demo:::getItem', { itemId });
        expect(reply.status).toBe(200);
        expect(reply.body.data).toEqual({ id: itemId, title: 'An item' });
        expect(upstream.requests.map((r) => r.url)).toEqual([`/v1/items/${strictlyEncoded(itemId)}`]);
        // Exactly three segments: v1, items and the value, which holds no raw `/`, `\`, `?` or `#`.
        const segments = upstream.requests[0]?.path.split('/') ?? [];
        expect(segments).toHaveLength(4);
        expect(segments[3]).toMatch(/^[A-Za-z0-9%._~-]+$/);
        expectContained();
      },
    );

    it.each([
      ['.', 'demo:::getItem', { itemId: '.' }, '/itemId'],
      ['..', 'demo:::getItem', { itemId: '..' }, '/itemId'],
      ['an empty segment', 'demo:::listOrgRepos', { org: '' }, '/org'],
      ['..', 'demo:::listOrgRepos', { org: '..' }, '/org'],
    ])('refuses a value that makes the segment %s', async (_label, toolId, parameters, path) => {
      const reply = await run(toolId, parameters);
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual(cannotBeSent(toolId, path, SEGMENT));
      expect(upstream.requests).toEqual([]);
      expectContained();
    });

    it('refuses a lone surrogate, which has no percent-encoding', async () => {
      const reply = await run('demo:::getItem', { itemId: 'a\uD800b' });
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual(
        cannotBeSent(
          'demo:::getItem',
          '/itemId',
          'Must be well-formed Unicode text (it holds a lone surrogate).',
        ),
      );
      expect(upstream.requests).toEqual([]);
    });
  });

  describe('query parameter values', () => {
    it.each([
      ['&admin=true', 'q=%26admin%3Dtrue'],
      ['x#frag', 'q=x%23frag'],
      ['//evil.host/@x', 'q=%2F%2Fevil.host%2F%40x'],
      ['a\r\nHost: evil.host', 'q=a%0D%0AHost%3A%20evil.host'],
    ])('keeps %j inside its value', async (q, query) => {
      const reply = await run('demo:::echo', { q });
      expect(reply.status).toBe(200);
      expect(upstream.requests.map((r) => [r.path, r.query])).toEqual([['/v1/echo', query]]);
      expectContained();
    });

    it('cannot add a second credential or replace the service one through another parameter', async () => {
      const reply = await run('qkey:::echo', { q: `x&api_key=caller` });
      expect(reply.status).toBe(200);
      const query = new URLSearchParams(upstream.requests[0]?.query);
      expect(query.getAll('api_key')).toEqual([API_KEY]);
      expect(query.get('q')).toBe('x&api_key=caller');
    });
  });

  describe('header parameter values', () => {
    it.each([
      ['CR LF', 'a\r\nX-Evil: 1'],
      ['LF', 'a\nX-Evil: 1'],
      ['CR', 'a\rb'],
      ['NUL', 'a\u0000b'],
      ['DEL', 'a\u007fb'],
      ['non-ASCII', 'café'],
      ['a line separator', 'a\u2028b'],
    ])('refuses a header value with %s', async (_label, value) => {
      const reply = await run('demo:::echo', { 'X-Trace-Id': value });
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual(cannotBeSent('demo:::echo', '/X-Trace-Id', FIELD_VALUE));
      expect(upstream.requests).toEqual([]);
    });

    it('refuses a line break hidden in an array header item', async () => {
      const reply = await run('demo:::echo', { 'X-Tags': ['a', 'b\r\nX-Evil: 1'] });
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual(cannotBeSent('demo:::echo', '/X-Tags', FIELD_VALUE));
      expect(upstream.requests).toEqual([]);
    });

    it('percent-encodes a cookie value instead of letting it add a header or cookie', async () => {
      const reply = await run('demo:::echo', { theme: 'dark; admin=1\r\nX-Evil: 1' });
      expect(reply.status).toBe(200);
      expect(upstream.requests[0]?.headers.cookie).toBe('theme=dark%3B%20admin%3D1%0D%0AX-Evil%3A%201');
      expect(upstream.requests[0]?.headers['x-evil']).toBeUndefined();
    });
  });

  describe('the target comes only from the registration', () => {
    it('ignores caller headers and app ids that look like hosts', async () => {
      const reply = await run('demo:::getText', {}, { host: 'evil.host', 'x-forwarded-host': 'evil.host' });
      expect(reply.status).toBe(200);
      expectContained();
      for (const toolId of [
        'http://evil.host:::getText',
        '//evil.host:::getText',
        'evil.host@demo:::getText',
      ]) {
        const denied = await run(toolId);
        expect(denied.status).toBe(404);
        expect(denied.body).toMatchObject({ error: 'tool_not_found', tool_id: toolId });
      }
      const bare = await run('getText', {}, { 'x-service-app-id': '//evil.host' });
      expect(bare.status).toBe(404);
      expect(upstream.requests).toHaveLength(1);
      expectContained();
    });
  });

  describe('redirects', () => {
    it('follows a redirect within the origin', async () => {
      const reply = await run('demo:::redirectSameOrigin');
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({
        ok: true,
        data: expect.objectContaining({ method: 'GET', path: '/v1/echo', query: 'redirected=1' }),
        meta: {
          tool_id: 'demo:::redirectSameOrigin',
          duration_ms: expect.any(Number),
          provider: 'acme.demo',
        },
      });
      expect(upstream.requests.map((r) => r.url)).toEqual(['/v1/redirect/same', '/v1/echo?redirected=1']);
      expectContained();
    });

    it('keeps the app credential on a same-origin redirect', async () => {
      const reply = await run('hkey:::redirectSameOrigin');
      expect(reply.status).toBe(200);
      expect(upstream.requests.map((r) => r.headers['x-api-key'])).toEqual([API_KEY, API_KEY]);
      const oauth = await run('oauthy:::redirectSameOrigin', {}, { 'x-service-user-id': USER });
      expect(oauth.status).toBe(200);
      expect(upstream.requests.slice(2).map((r) => r.headers.authorization)).toEqual([
        `Bearer ${ACCESS_TOKEN}`,
        `Bearer ${ACCESS_TOKEN}`,
      ]);
    });

    it.each([
      ['auth none', 'demo', {}],
      ['an api_key header', 'hkey', {}],
      ['an api_key query parameter', 'qkey', {}],
      ['a user OAuth token', 'oauthy', { 'x-service-user-id': USER }],
    ])(
      'answers a cross-origin redirect with 502 and sends nothing there (%s)',
      async (_label, appId, headers) => {
        const toolId = `${appId}:::redirectCrossOrigin`;
        const reply = await run(toolId, {}, headers);
        expect(reply.status).toBe(502);
        expect(reply.body).toEqual({
          ok: false,
          error: 'upstream_error',
          message: 'The upstream answered 302.',
          upstream_status: 302,
          upstream_body: '',
        });
        expect(upstream.requests.map((r) => r.url)).toEqual([
          appId === 'qkey' ? `/v1/redirect/cross?api_key=${API_KEY}` : '/v1/redirect/cross',
        ]);
        expect(upstream.other.requests).toEqual([]);
        expectContained();
      },
    );

    it('sent the OAuth token to the app origin only (the grant works)', async () => {
      const me = await run('oauthy:::getMe', {}, { 'x-service-user-id': USER });
      expect(me.status).toBe(200);
      expect(me.body.data).toEqual({ id: 'user-1', name: 'Ada' });
      await run('oauthy:::redirectCrossOrigin', {}, { 'x-service-user-id': USER });
      expect(upstream.requests.map((r) => r.headers.authorization)).toEqual([
        `Bearer ${ACCESS_TOKEN}`,
        `Bearer ${ACCESS_TOKEN}`,
      ]);
      expect(upstream.other.requests).toEqual([]);
      expect(server.logs.join('')).not.toContain(ACCESS_TOKEN);
      expect(server.logs.join('')).not.toContain(API_KEY);
    });
  });
});
