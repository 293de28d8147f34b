/**
 * The Toolset under every adapter: reading the catalog (query, limit, pages by cursor, a server that
 * ignores them), selecting apps and tools, the options' checks, and the idempotency key of a call
 * whose answer was lost — against a real server and upstream. Strategies and the search pair:
 * strategy.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadToolset } from '../../../sdk/src/adapters/load.ts';
import { ToolgateArgumentError } from '../../../sdk/src/index.ts';
import { recordingFetch, startWorld, type World } from '../world.ts';
import { proxyCalls } from './calls.ts';

describe('SDK adapters: the Toolset', () => {
  let w: World;
  let all: string[];
  beforeAll(async () => {
    w = await startWorld('pglite');
    const listed = await w.toolgate().listTools();
    if (!listed.ok) throw new Error(listed.error);
    expect(listed.nextCursor).toBeUndefined();
    all = listed.tools.map((t) => t.toolId);
  });
  afterAll(async () => {
    await w?.close();
  });

  it('reads every page, following next_cursor', async () => {
    const { fetch, sent } = recordingFetch();
    const loaded = await loadToolset(w.toolgate({ fetch }), { userId: 'u', pageSize: 5 });
    if (!loaded.ok) throw new Error(loaded.error);
    expect(loaded.toolset.tools.map((t) => t.toolId)).toEqual(all);
    const pages = sent.filter((s) => s.path === '/tools');
    expect(pages).toHaveLength(Math.ceil(all.length / 5));
    const queries = sent.filter((s) => s.path === '/tools').map((s) => s.url.searchParams);
    expect(queries[0]?.get('limit')).toBe('5');
    expect(queries[0]?.has('cursor')).toBe(false);
    for (const query of queries.slice(1)) expect(query.get('cursor')).toMatch(/.+/);
  });

  it('query offers the best tools the search finds; limit is how many, and never cuts the catalog', async () => {
    const { fetch, sent } = recordingFetch();
    const found = await loadToolset(w.toolgate({ fetch }), { apps: ['open'], query: 'item' });
    if (!found.ok) throw new Error(found.error);
    expect(found.toolset.tools.map((t) => t.toolId).sort()).toEqual([
      'open:::createItem',
      'open:::deleteItem',
      'open:::getItem',
      'open:::listItems',
    ]);
    expect(found.toolset.strategy).toBe('all');
    expect(sent).toHaveLength(1);
    expect(sent[0]?.url.searchParams.get('q')).toBe('item');
    expect(sent[0]?.url.searchParams.get('appId')).toBe('open');
    expect(sent[0]?.url.searchParams.get('limit')).toBe('20');

    const best = await loadToolset(w.toolgate(), { apps: ['open'], q: 'item', limit: 2 });
    expect(best.ok && best.toolset.tools.length).toBe(2);

    // Without a search, limit is the size of each turn's selection: the catalog stays whole.
    const whole = await loadToolset(w.toolgate(), { userId: 'u', limit: 3, pageSize: 2 });
    if (!whole.ok) throw new Error(whole.error);
    expect(whole.toolset.tools.map((t) => t.toolId)).toEqual(all);
    const turn = await whole.toolset.selectFor('item');
    expect(turn.ok && turn.tools?.length).toBe(3);
  });

  it('works with a server that ignores q, limit and cursor (one page, no next_cursor)', async () => {
    const seen: string[] = [];
    const olderServer: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      const url = new URL(request.url);
      for (const name of ['q', 'limit', 'cursor']) url.searchParams.delete(name);
      seen.push(url.search);
      return fetch(new Request(url, request));
    };
    const loaded = await loadToolset(w.toolgate({ fetch: olderServer }), { userId: 'u', pageSize: 2 });
    if (!loaded.ok) throw new Error(loaded.error);
    expect(loaded.toolset.tools.map((t) => t.toolId)).toEqual(all);
    expect(seen).toEqual(['']);
  });

  it('selects apps and named tools; refuses names it cannot find and tools that need a user without one', async () => {
    const picked = await loadToolset(w.toolgate(), {
      userId: 'u',
      apps: ['open'],
      tools: ['demo:::getMe'],
    });
    if (!picked.ok) throw new Error(picked.error);
    const ids = picked.toolset.tools.map((t) => t.toolId);
    expect(ids.filter((id) => id.startsWith('demo:::'))).toEqual(['demo:::getMe']);
    expect(ids.filter((id) => id.startsWith('open:::'))).toEqual(
      all.filter((id) => id.startsWith('open:::')),
    );

    await expect(loadToolset(w.toolgate(), { tools: ['open:::nope', 'open:::getItem'] })).rejects.toThrow(
      new ToolgateArgumentError(
        'options.tools: open:::nope is not in the catalog of this key',
        'ERR_INVALID_ARG_VALUE',
      ),
    );
    await expect(loadToolset(w.toolgate(), { tools: ['getItem'] })).rejects.toThrow(
      'options.tools: "getItem" is not a composite tool id (<appId>:::<toolName>)',
    );
    await expect(loadToolset(w.toolgate(), { apps: ['demo'] })).rejects.toThrow(
      'options.userId must be given (or userId set on the client): demo:::listItems acts for an end user',
    );
    // The client's own userId serves.
    const withClientUser = await loadToolset(w.toolgate({ userId: 'from-client' }), { apps: ['demo'] });
    expect(withClientUser.ok && withClientUser.toolset.userId).toBe('from-client');
    await expect(loadToolset(w.toolgate(), { pageSize: 1001 })).rejects.toThrow(
      'options.pageSize must be a whole number from 1 to 1000',
    );
  });

  it('a catalog the key cannot read is a typed failure', async () => {
    const loaded = await loadToolset(w.toolgate({ apiKey: 'tg_key_not_a_key' }), {});
    expect(loaded).toMatchObject({ ok: false, error: 'invalid_api_key', status: 401 });
  });

  it('a lost answer is resent with the same key: the upstream runs once and the model gets the result', async () => {
    let dropped = 0;
    const { fetch: recording, sent } = recordingFetch(async (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      const response = await fetch(input, init);
      if (url.pathname === '/proxyV2' && dropped === 0) {
        dropped += 1;
        await response.arrayBuffer(); // the server answered; the answer never reaches the SDK
        throw new TypeError('fetch failed', { cause: new Error('ECONNRESET') });
      }
      return response;
    });
    const loaded = await loadToolset(w.toolgate({ fetch: recording }), { apps: ['open'] });
    if (!loaded.ok) throw new Error(loaded.error);
    const posts = () => w.upstream.requests.filter((r) => r.method === 'POST' && r.path === '/items').length;
    const before = posts();

    const outcome = await loaded.toolset.call('open__createItem', { body: { title: 'Once' } });

    expect(outcome).toMatchObject({
      name: 'open__createItem',
      toolId: 'open:::createItem',
      isError: false,
      output: { ok: true, data: { id: 'item-1', title: 'Once' } },
      result: { ok: true, replayed: true },
    });
    expect(posts() - before).toBe(1);
    const calls = proxyCalls(sent);
    expect(calls).toHaveLength(2);
    expect(calls[1]?.key).toBe(calls[0]?.key);
  });

  it('answers the model for a name it does not know or arguments that are not an object', async () => {
    const loaded = await loadToolset(w.toolgate(), { apps: ['open'] });
    if (!loaded.ok) throw new Error(loaded.error);
    expect(await loaded.toolset.call('nope__nothing', {})).toEqual({
      name: 'nope__nothing',
      toolId: undefined,
      isError: true,
      output: {
        ok: false,
        error: 'tool_not_found',
        message: 'There is no tool named nope__nothing; call one of the tools offered.',
      },
      text: JSON.stringify({
        ok: false,
        error: 'tool_not_found',
        message: 'There is no tool named nope__nothing; call one of the tools offered.',
      }),
      result: undefined,
    });
    expect((await loaded.toolset.call('open__getItem', ['x'])).output).toEqual({
      ok: false,
      error: 'invalid_parameters',
      message: 'The arguments of open__getItem must be a JSON object.',
    });
  });
});
