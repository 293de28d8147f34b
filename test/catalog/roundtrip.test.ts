/**
 * Build a request with the catalog, send it with fetch to the real upstream fixture, and assert what
 * the upstream received on the wire.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CompiledApp } from '../../server/catalog/catalog.ts';
import type { BuildOptions } from '../../server/catalog/request.ts';
import { type RecordedRequest, startUpstream, type Upstream } from '../support/upstream.ts';
import { compiled } from './helpers.ts';

let upstream: Upstream;
let app: CompiledApp;

beforeAll(async () => {
  upstream = await startUpstream({ basePath: '/v1' });
  app = await compiled(upstream.openapi);
});
afterAll(async () => {
  await upstream.close();
});
beforeEach(() => {
  upstream.reset();
});

/** Validates, builds and sends one call; answers the response and what the upstream recorded. */
async function call(name: string, parameters: Record<string, unknown>, options?: BuildOptions) {
  const tool = app.tools.get(name);
  if (!tool) throw new Error(`no tool ${name}`);
  expect(tool.validate(parameters)).toEqual([]);
  const built = tool.buildRequest(app.serverUrl ?? '', parameters, options);
  if (!built.ok) throw new Error(JSON.stringify(built.error));
  const request = built.value;
  const response = await fetch(request.url, {
    method: request.method,
    headers: request.headers,
    body: request.body,
    redirect: 'manual',
  });
  await response.arrayBuffer();
  expect(upstream.requests).toHaveLength(1);
  return { response, received: upstream.requests[0] as RecordedRequest };
}

describe('round trip to the upstream fixture', () => {
  it('sends the base path, the encoded path parameter and a non-exploded query array', async () => {
    const { response, received } = await call('getItem', { itemId: '../admin?x#y', fields: ['title', 'id'] });
    expect(response.status).toBe(200);
    expect(received.method).toBe('GET');
    expect(received.url).toBe('/v1/items/..%2Fadmin%3Fx%23y?fields=title,id');
    expect(received.headers.accept).toBe('application/json');
  });

  it('sends every query style exactly as serialized', async () => {
    const { received } = await call('listItems', {
      tags: ['a b', 'c'],
      ids: [1, 2],
      sizes: ['s', 'm'],
      colors: ['red', 'blue'],
      filter: { status: 'open' },
      point: { x: 1, y: 2 },
      limit: 5,
      q: 'a/b:c',
    });
    expect(received.path).toBe('/v1/items');
    expect(received.query).toBe(
      'tags=a%20b&tags=c&ids=1,2&sizes=s%20m&colors=red|blue&filter[status]=open&x=1&y=2&limit=5&q=a/b:c',
    );
    const search = new URLSearchParams(received.query);
    expect(search.getAll('tags')).toEqual(['a b', 'c']);
    expect(search.get('filter[status]')).toBe('open');
  });

  it('sends the JSON body with its content type', async () => {
    const { response, received } = await call('createItem', {
      body: { title: 'Tea', labels: ['hot', 'green'] },
    });
    expect(response.status).toBe(201);
    expect(received.method).toBe('POST');
    expect(received.path).toBe('/v1/items');
    expect(received.headers['content-type']).toBe('application/json');
    expect(received.body).toBe('{"title":"Tea","labels":["hot","green"]}');
    expect(received.headers['content-length']).toBe(String(received.bodyBytes.length));
  });

  it('sends header and cookie parameters', async () => {
    const { received } = await call('echo', {
      'X-Trace-Id': 't-1',
      'X-Tags': ['a', 'b'],
      theme: 'dark mode',
      q: 'x',
    });
    expect(received.url).toBe('/v1/echo?q=x');
    expect(received.headers['x-trace-id']).toBe('t-1');
    expect(received.headers['x-tags']).toBe('a,b');
    expect(received.headers.cookie).toBe('theme=dark%20mode');
    expect(received.headers.authorization).toBeUndefined();
  });

  it('merges path-level and operation-level parameters on the wire', async () => {
    const { received } = await call('listOrgRepos', { org: 'acme corp', sort: 'name', 'X-Trace-Id': 'z' });
    expect(received.url).toBe('/v1/orgs/acme%20corp/repos?sort=name');
    expect(received.headers['x-trace-id']).toBe('z');
  });

  it('authenticates with the service’s api key, in a header or the query', async () => {
    const header = await call(
      'getWithHeaderKey',
      {},
      { credentials: { headers: { 'X-Api-Key': upstream.apiKey } } },
    );
    expect(header.response.status).toBe(200);
    expect(header.received.headers['x-api-key']).toBe(upstream.apiKey);
    upstream.reset();
    const query = await call('getWithQueryKey', {}, { credentials: { query: { api_key: upstream.apiKey } } });
    expect(query.response.status).toBe(200);
    expect(query.received.query).toBe(`api_key=${upstream.apiKey}`);
  });

  it('reaches OAuth-protected operations with the bearer token the service adds', async () => {
    upstream.setAccessToken('token-1');
    const ok = await call('getMe', {}, { credentials: { headers: { Authorization: 'Bearer token-1' } } });
    expect(ok.response.status).toBe(200);
    upstream.reset();
    const refused = await call('getMe', {}, { credentials: { headers: { Authorization: 'Bearer stale' } } });
    expect(refused.response.status).toBe(401);
    expect(refused.response.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
  });
});
