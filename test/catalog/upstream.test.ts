/** The upstream fixture itself: the end-to-end tests of /proxyV2 rely on each of these behaviours. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PNG_1X1, startUpstream, type Upstream } from '../support/upstream.ts';

let upstream: Upstream;

beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(async () => {
  await upstream.close();
});
beforeEach(() => {
  upstream.reset();
  upstream.setAccessToken(null);
});

const get = (path: string, init?: RequestInit) =>
  fetch(`${upstream.url}${path}`, { redirect: 'manual', ...init });

describe('upstream fixture', () => {
  it('records method, raw target, headers and body of every request', async () => {
    await fetch(`${upstream.url}/items?a=%20b`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-one': '1' },
      body: '{"title":"T"}',
    });
    expect(upstream.requests).toHaveLength(1);
    const [received] = upstream.requests;
    expect(received).toMatchObject({
      method: 'POST',
      url: '/items?a=%20b',
      path: '/items',
      query: 'a=%20b',
      body: '{"title":"T"}',
      headers: { 'content-type': 'application/json', 'x-one': '1' },
    });
    expect(received?.rawHeaders).toContain('x-one');
  });

  it('serves text, PNG and 204 answers', async () => {
    const text = await get('/text');
    expect([text.status, text.headers.get('content-type'), await text.text()]).toEqual([
      200,
      'text/plain; charset=utf-8',
      'hello, world',
    ]);
    const image = await get('/image');
    expect(image.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await image.arrayBuffer())).toEqual(PNG_1X1);
    const deleted = await fetch(`${upstream.url}/items/1`, { method: 'DELETE' });
    expect([deleted.status, await deleted.text()]).toEqual([204, '']);
  });

  it('answers any status with a JSON body, or a text body of the asked size', async () => {
    const json = await get('/status/418');
    expect([json.status, await json.json()]).toEqual([418, { error: 'status 418', code: 418 }]);
    const big = await get('/status/500?size=70000');
    expect([big.status, (await big.text()).length]).toEqual([500, 70000]);
  });

  it('answers slowly when asked, and can be timed out', async () => {
    const started = Date.now();
    const slow = await get('/slow?ms=150');
    expect(await slow.json()).toEqual({ sleptMs: 150 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    await expect(get('/slow?ms=5000', { signal: AbortSignal.timeout(50) })).rejects.toThrow();
  });

  it('redirects within its origin and to another origin that records requests too', async () => {
    const same = await get('/redirect/same');
    expect([same.status, same.headers.get('location')]).toEqual([302, '/echo?redirected=1']);
    const permanent = await get('/redirect/same?status=308');
    expect(permanent.status).toBe(308);
    const cross = await get('/redirect/cross');
    expect([cross.status, cross.headers.get('location')]).toEqual([302, `${upstream.other.url}/landing`]);
    expect(new URL(upstream.other.url).origin).not.toBe(upstream.origin);
    await fetch(`${upstream.other.url}/landing`, { headers: { authorization: 'Bearer leak' } });
    expect(upstream.other.requests.map((r) => [r.path, r.headers.authorization])).toEqual([
      ['/landing', 'Bearer leak'],
    ]);
  });

  it('checks the api key in the header and in the query', async () => {
    expect((await get('/secure/header-key')).status).toBe(401);
    expect((await get('/secure/header-key', { headers: { 'x-api-key': upstream.apiKey } })).status).toBe(200);
    expect((await get('/secure/query-key?api_key=wrong')).status).toBe(401);
    expect((await get(`/secure/query-key?api_key=${upstream.apiKey}`)).status).toBe(200);
    upstream.setApiKey('rotated');
    expect((await get('/secure/header-key', { headers: { 'x-api-key': 'rotated' } })).status).toBe(200);
  });

  it('accepts only the bearer token the test set, or what its token check accepts', async () => {
    const me = (token?: string) => get('/me', token ? { headers: { authorization: `Bearer ${token}` } } : {});
    expect((await me('anything')).status).toBe(401);
    upstream.setAccessToken('good');
    expect([(await me()).status, (await me('bad')).status]).toEqual([401, 401]);
    const ok = await me('good');
    expect([ok.status, await ok.json()]).toEqual([200, { id: 'user-1', name: 'Ada' }]);
    upstream.setTokenCheck(async (token) => token.startsWith('oidc-'));
    expect([(await me('oidc-1')).status, (await me('good')).status]).toEqual([200, 401]);
    upstream.setTokenCheck((token) => token === 'good');
  });

  it('serves routes below a base path only, and its documents name that base URL', async () => {
    const prefixed = await startUpstream({ basePath: '/v1/' });
    try {
      expect(prefixed.url).toBe(`${prefixed.origin}/v1`);
      expect((await fetch(`${prefixed.url}/text`)).status).toBe(200);
      expect((await fetch(`${prefixed.origin}/text`)).status).toBe(404);
      expect(prefixed.openapi.servers).toEqual([{ url: prefixed.url }]);
      expect(prefixed.openapi30.servers).toEqual([{ url: prefixed.url }]);
    } finally {
      await prefixed.close();
    }
  });

  it('closes even with a request still waiting', async () => {
    const other = await startUpstream();
    const pending = fetch(`${other.url}/slow?ms=10000`).catch(() => 'aborted');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    await other.close();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await pending).toBe('aborted');
  });
});
