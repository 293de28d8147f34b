/**
 * Parameter mapping as the upstream receives it (docs/reference.md "Agent endpoints"): path percent-encoding, query
 * style/explode, header and cookie parameters, the JSON body, and the app's api_key credential
 * injected by the service, which no caller can set or override.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Agent, provisionAgent, registerApp } from '../support/agent.ts';
import { describeBackends } from '../support/db.ts';
import type { TestServer } from '../support/server.ts';
import type { RecordedRequest, Upstream } from '../support/upstream.ts';
import { startWorld, type World } from '../support/world.ts';
import { strictlyEncoded } from './helpers.ts';

const SECRET = 'svc-key-6c1f0a9e-do-not-leak';

const ok200 = { 200: { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } } };

/** Operations that declare their credential as a parameter, and say so in securitySchemes. */
function declaredCredentialsDocument(baseUrl: string) {
  return {
    openapi: '3.1.0',
    info: { title: 'declared credentials', version: '1' },
    servers: [{ url: baseUrl }],
    paths: {
      '/secure/header-key': {
        get: {
          operationId: 'headerKey',
          security: [{ keyHeader: [] }],
          parameters: [
            { name: 'X-Api-Key', in: 'header', required: true, schema: { type: 'string' } },
            { name: 'q', in: 'query', schema: { type: 'string' } },
          ],
          responses: ok200,
        },
      },
      '/secure/query-key': {
        get: {
          operationId: 'queryKey',
          security: [{ keyQuery: [] }],
          parameters: [
            { name: 'api_key', in: 'query', required: true, schema: { type: 'string' } },
            { name: 'q', in: 'query', schema: { type: 'string' } },
          ],
          responses: ok200,
        },
      },
    },
    components: {
      securitySchemes: {
        keyHeader: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
        keyQuery: { type: 'apiKey', in: 'query', name: 'api_key' },
      },
    },
  };
}

/** The same operations with the credential as a plain parameter: no security scheme names it. */
function undeclaredCredentialsDocument(baseUrl: string) {
  const document = declaredCredentialsDocument(baseUrl) as Record<string, unknown>;
  const paths = structuredClone(document.paths) as Record<string, { get: Record<string, unknown> }>;
  for (const item of Object.values(paths)) {
    delete item.get.security;
    for (const parameter of item.get.parameters as { required?: boolean }[]) delete parameter.required;
  }
  return { ...document, paths, components: {} };
}

describeBackends('parameter mapping as the upstream receives it', (backend) => {
  let world: World;
  let server: TestServer;
  let upstream: Upstream;
  let agent: Agent;

  beforeAll(async () => {
    world = await startWorld(backend.name, { upstream: { basePath: '/v1', apiKey: SECRET } });
    ({ server, upstream } = world);
    const none = { type: 'none' };
    const header = { type: 'api_key', in: 'header', name: 'X-Api-Key', value: SECRET };
    const query = { type: 'api_key', in: 'query', name: 'api_key', value: SECRET };
    await registerApp(server, 'demo', { provider: 'acme.demo', openapi: upstream.openapi, auth: none });
    await registerApp(server, 'v30', { provider: 'acme.demo', openapi: upstream.openapi30, auth: none });
    await registerApp(server, 'hkey', { provider: 'acme.keys', openapi: upstream.openapi, auth: header });
    await registerApp(server, 'qkey', { provider: 'acme.keys', openapi: upstream.openapi, auth: query });
    const declared = declaredCredentialsDocument(upstream.url);
    const undeclared = undeclaredCredentialsDocument(upstream.url);
    await registerApp(server, 'dh', { provider: 'acme.keys', openapi: declared, auth: header });
    await registerApp(server, 'dq', { provider: 'acme.keys', openapi: declared, auth: query });
    await registerApp(server, 'uh', { provider: 'acme.keys', openapi: undeclared, auth: header });
    await registerApp(server, 'uq', { provider: 'acme.keys', openapi: undeclared, auth: query });
    await registerApp(server, 'authdoc', {
      provider: 'acme.demo',
      openapi: {
        openapi: '3.1.0',
        info: { title: 'an Authorization parameter', version: '1' },
        servers: [{ url: upstream.url }],
        paths: {
          '/echo': {
            get: {
              operationId: 'echoWithAuthorization',
              parameters: [
                { name: 'Authorization', in: 'header', required: true, schema: { type: 'string' } },
                { name: 'Host', in: 'header', schema: { type: 'string' } },
                { name: 'q', in: 'query', schema: { type: 'string' } },
              ],
              responses: ok200,
            },
          },
        },
      },
      auth: header,
    });
    agent = await provisionAgent(server, ['tools:execute']);
  });
  afterAll(async () => {
    await world?.close();
  });
  beforeEach(() => upstream.reset());

  const run = (toolId: string, parameters: Record<string, unknown> = {}) =>
    world.proxy(agent, { toolId, parameters });

  /** Runs a tool that must succeed and answers the one request the upstream received. */
  async function received(
    toolId: string,
    parameters: Record<string, unknown> = {},
  ): Promise<RecordedRequest> {
    upstream.reset();
    const reply = await run(toolId, parameters);
    expect(reply.status, reply.text).toBe(200);
    expect(upstream.requests).toHaveLength(1);
    expect(upstream.other.requests).toEqual([]);
    return upstream.requests[0] as RecordedRequest;
  }

  describe('path parameters', () => {
    it.each([
      ['plain text', 'abc-123_x.y~z'],
      ['a space', 'a b'],
      ['reserved characters', 'a/b?c#d%e&f=g;h,i:j@k+l$m'],
      ['sub-delimiters JavaScript leaves raw', "it's (a) *star*!"],
      ['non-ASCII text', 'café ✓ 日本'],
      ['a percent sign that looks like encoding', '%41%2F'],
    ])('substitutes and percent-encodes %s', async (_label, itemId) => {
      const request = await received('demo:::getItem', { itemId });
      expect(request.method).toBe('GET');
      expect(request.url).toBe(`/v1/items/${strictlyEncoded(itemId)}`);
      // The upstream decodes it back to exactly the value given.
      expect(decodeURIComponent(request.path.slice('/v1/items/'.length))).toBe(itemId);
    });

    it('fills path-level and operation-level parameters together', async () => {
      const request = await received('demo:::listOrgRepos', {
        org: 'my org',
        sort: 'name',
        'X-Trace-Id': 't-1',
      });
      expect(request.url).toBe('/v1/orgs/my%20org/repos?sort=name');
      expect(request.headers['x-trace-id']).toBe('t-1');
    });

    it('answers the upstream body built from the decoded value', async () => {
      const reply = await run('demo:::getItem', { itemId: 'a/b c' });
      expect(reply.body.data).toEqual({ id: 'a/b c', title: 'An item' });
    });
  });

  describe('query parameters', () => {
    it('serializes every style and explode form', async () => {
      const request = await received('demo:::listItems', {
        tags: ['a', 'b c'],
        ids: [1, 2, 3],
        sizes: ['s', 'm l'],
        colors: ['red', 'blue'],
        filter: { status: 'open', 'a b': 'c&d' },
        point: { x: 1, y: 2 },
        limit: 10,
        q: 'a/b?c=d&e#f',
      });
      expect(request.path).toBe('/v1/items');
      expect(request.query).toBe(
        [
          'tags=a&tags=b%20c', // form, exploded (the default)
          'ids=1,2,3', // form, explode: false
          'sizes=s%20m%20l', // spaceDelimited
          'colors=red|blue', // pipeDelimited
          'filter[status]=open&filter[a%20b]=c%26d', // deepObject
          'x=1&y=2', // an object, form, exploded
          'limit=10',
          'q=a/b?c%3Dd%26e%23f', // allowReserved: reserved characters raw, but never & = #
        ].join('&'),
      );
    });

    it.each([
      ['one exploded item', { tags: ['only'] }, 'tags=only'],
      ['an empty exploded array as nothing', { tags: [] }, ''],
      ['a number as its text', { limit: 1 }, 'limit=1'],
      ['an empty object as nothing', { point: {} }, ''],
    ])('serializes %s', async (_label, parameters, query) => {
      const request = await received('demo:::listItems', parameters);
      expect(request.query).toBe(query);
    });

    it('serializes a non-exploded array beside a path parameter', async () => {
      const request = await received('demo:::getItem', { itemId: 'i', fields: ['a', 'b'] });
      expect(request.url).toBe('/v1/items/i?fields=a,b');
    });

    it('encodes every value character that could end the value or the query', async () => {
      const request = await received('demo:::echo', { q: 'a b&c=d#e+f%g?h/i' });
      expect(request.query).toBe('q=a%20b%26c%3Dd%23e%2Bf%25g%3Fh%2Fi');
      expect(new URLSearchParams(request.query).get('q')).toBe('a b&c=d#e+f%g?h/i');
    });
  });

  describe('header and cookie parameters', () => {
    it('sends header parameters as headers and cookie parameters as a Cookie', async () => {
      const request = await received('demo:::echo', {
        'X-Trace-Id': 'trace 42',
        'X-Tags': ['a', 'b'],
        theme: 'dark mode',
      });
      expect(request.headers['x-trace-id']).toBe('trace 42');
      expect(request.headers['x-tags']).toBe('a,b');
      expect(request.headers.cookie).toBe('theme=dark%20mode');
    });

    it('sends none of the caller’s own headers to the upstream', async () => {
      upstream.reset();
      const reply = await world.proxy(
        agent,
        { toolId: 'demo:::echo', parameters: {} },
        {
          'x-service-app-id': 'demo',
          'x-service-user-id': 'u-1',
          'x-request-id': 'req-1',
          cookie: 'session=caller',
          'x-trace-id': 'from-caller',
          'x-forwarded-host': 'evil.example',
        },
      );
      expect(reply.status).toBe(200);
      const [request] = upstream.requests;
      const names = Object.keys(request?.headers ?? {});
      expect(names.filter((name) => name.startsWith('x-'))).toEqual([]);
      expect(names).not.toContain('authorization');
      expect(names).not.toContain('cookie');
      expect(request?.headers.host).toBe(new URL(upstream.url).host);
      expect(request?.rawHeaders.join('\n')).not.toContain(agent.apiKey);
    });
  });

  describe('JSON body', () => {
    it('sends `body` as JSON with its content type', async () => {
      const body = { title: 'Ünïcode ✓ "quoted"', labels: ['x', 'y'] };
      const request = await received('demo:::createItem', { body });
      expect(request.method).toBe('POST');
      expect(request.url).toBe('/v1/items');
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.body).toBe(JSON.stringify(body));
      expect(Number(request.headers['content-length'])).toBe(Buffer.byteLength(JSON.stringify(body)));
    });

    it('sends a 3.0 nullable property as null and a read-only one only when given', async () => {
      const request = await received('v30:::createItem', { body: { title: 'T', labels: null } });
      expect(JSON.parse(request.body)).toEqual({ title: 'T', labels: null });
    });

    it('sends no body and no content type when the operation has none', async () => {
      const request = await received('demo:::getText');
      expect(request.body).toBe('');
      expect(request.headers['content-type']).toBeUndefined();
    });
  });

  describe('api_key credentials', () => {
    it('adds the header credential to every call of the app', async () => {
      const request = await received('hkey:::getWithHeaderKey');
      expect(request.headers['x-api-key']).toBe(SECRET);
      expect((await received('hkey:::getText')).headers['x-api-key']).toBe(SECRET);
    });

    it('adds the query credential to every call of the app, after the caller’s parameters', async () => {
      const request = await received('qkey:::getWithQueryKey');
      expect(request.url).toBe(`/v1/secure/query-key?api_key=${SECRET}`);
      expect((await received('qkey:::echo', { q: 'x' })).query).toBe(`q=x&api_key=${SECRET}`);
    });

    it('adds no credential to the apps of auth none', async () => {
      const reply = await run('demo:::getWithHeaderKey');
      expect(reply.status).toBe(502);
      expect(reply.body).toMatchObject({ error: 'upstream_error', upstream_status: 401 });
      expect(upstream.requests[0]?.headers['x-api-key']).toBeUndefined();
    });

    it('does not show declared credential parameters in the catalog', async () => {
      const reply = await world.call('GET', '/tools?appId=dh', {
        key: agent.apiKey,
        clientId: agent.clientId,
      });
      expect(reply.status).toBe(200);
      for (const tool of reply.body.tools) {
        expect(tool.parameters.properties).toEqual({ q: { type: 'string' } });
        expect(tool.parameters.required).toBeUndefined();
      }
      expect(reply.text).not.toContain('X-Api-Key');
      expect(reply.text).not.toContain('api_key');
    });

    it.each([
      ['dh:::headerKey', 'X-Api-Key'],
      ['dh:::headerKey', 'x-api-key'],
      ['dq:::queryKey', 'api_key'],
      ['hkey:::getWithHeaderKey', 'X-Api-Key'],
      ['qkey:::getWithQueryKey', 'api_key'],
      ['hkey:::echo', 'Authorization'],
    ])(
      'refuses a caller value for the credential of %s (%s) as an unknown parameter',
      async (toolId, name) => {
        const reply = await run(toolId, { [name]: 'caller-value' });
        expect(reply.status).toBe(400);
        expect(reply.body).toEqual({
          ok: false,
          error: 'invalid_parameters',
          message: 'The parameters do not match the tool.',
          tool_id: toolId,
          issues: [
            {
              path: `/${name}`,
              message: `Unknown parameter "${name}": the tool has no parameter of that name.`,
            },
          ],
        });
        expect(upstream.requests).toEqual([]);
      },
    );

    it('runs declared-credential tools with the service value only', async () => {
      const header = await received('dh:::headerKey', { q: '1' });
      expect(header.headers['x-api-key']).toBe(SECRET);
      const query = await received('dq:::queryKey', { q: '1' });
      expect(query.query).toBe(`q=1&api_key=${SECRET}`);
    });

    it('leaves the app’s api-key parameter out of the tool even when the document does not mark it as a credential', async () => {
      const refused = await run('uh:::headerKey', { 'X-Api-Key': 'caller-value', q: '1' });
      expect([refused.status, refused.body.issues]).toEqual([
        400,
        [
          {
            path: '/X-Api-Key',
            message: 'Unknown parameter "X-Api-Key": the tool has no parameter of that name.',
          },
        ],
      ]);
      const refusedQuery = await run('uq:::queryKey', { api_key: 'caller-value', q: '1' });
      expect([refusedQuery.status, refusedQuery.body.issues]).toEqual([
        400,
        [
          {
            path: '/api_key',
            message: 'Unknown parameter "api_key": the tool has no parameter of that name.',
          },
        ],
      ]);
      const header = await received('uh:::headerKey', { q: '1' });
      expect(header.headers['x-api-key']).toBe(SECRET);
      const sent = header.rawHeaders
        .filter((_value, index) => index % 2 === 0)
        .map((name) => name.toLowerCase());
      expect(sent.filter((name) => name === 'x-api-key')).toHaveLength(1);
      expect(header.rawHeaders).not.toContain('caller-value');

      const query = await received('uq:::queryKey', { q: '1' });
      expect(new URLSearchParams(query.query).getAll('api_key')).toEqual([SECRET]);
      expect(query.query).toBe(`q=1&api_key=${SECRET}`);
    });

    it('never makes Authorization or Host a tool parameter, even when the operation lists them', async () => {
      const tools = await world.call('GET', '/tools?appId=authdoc', {
        key: agent.apiKey,
        clientId: agent.clientId,
      });
      expect(tools.body.tools[0].parameters.properties).toEqual({ q: { type: 'string' } });
      const refused = await run('authdoc:::echoWithAuthorization', {
        Authorization: 'Bearer caller',
        Host: 'evil',
      });
      expect(refused.status).toBe(400);
      expect(refused.body.issues).toEqual([
        {
          path: '/Authorization',
          message: 'Unknown parameter "Authorization": the tool has no parameter of that name.',
        },
        { path: '/Host', message: 'Unknown parameter "Host": the tool has no parameter of that name.' },
      ]);
      const request = await received('authdoc:::echoWithAuthorization', { q: '1' });
      expect(request.headers.authorization).toBeUndefined();
      expect(request.headers['x-api-key']).toBe(SECRET);
    });

    it('never shows the credential in the catalog or an error body', async () => {
      const tools = await world.call('GET', '/tools', { key: agent.apiKey, clientId: agent.clientId });
      expect(tools.text).not.toContain(SECRET);
      upstream.setApiKey('rotated-upstream-key');
      try {
        const refused = await run('hkey:::getWithHeaderKey');
        expect(refused.status).toBe(502);
        expect(refused.body).toEqual({
          ok: false,
          error: 'upstream_error',
          message: 'The upstream answered 401.',
          upstream_status: 401,
          upstream_body: JSON.stringify({ error: 'bad api key' }),
        });
      } finally {
        upstream.setApiKey(SECRET);
      }
      expect(server.logs.join('')).not.toContain(SECRET);
    });
  });
});
