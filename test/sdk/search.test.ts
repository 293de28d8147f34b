/**
 * `toolgate.searchTools`: the ranked tools for a task (`GET /tools?q=`), within apps, with the text
 * a person writes (line breaks, a long message), argument checks before any request — against a
 * real server holding an app of 300 tools. The queries name one tool whether the server filters by
 * words or ranks, so the top answer is the same either way.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type SearchedTool, ToolgateArgumentError } from '../../sdk/src/index.ts';
import { describeBackends } from '../support/db.ts';
import { type LargeWorld, startLargeWorld } from './adapters/large-world.ts';
import { recordingFetch } from './world.ts';

/** The fields of §10 that servers before ranked search leave out: checked where present. */
function expectRanked(tool: SearchedTool, title: string, method: string, path: string): void {
  if (tool.title !== undefined) expect(tool.title).toBe(title);
  if (tool.method !== undefined) expect(tool.method).toBe(method);
  if (tool.path !== undefined) expect(tool.path).toBe(path);
  if (tool.score !== undefined) expect(tool.score).toBeGreaterThan(0);
}

describeBackends('SDK: searchTools', (backend) => {
  let w: LargeWorld;
  beforeAll(async () => {
    w = await startLargeWorld(backend.name);
  });
  afterAll(async () => {
    await w?.close();
  });

  it('answers the tools for a task, best first, within one app (appId)', async () => {
    const { fetch, sent } = recordingFetch();
    const found = await w.toolgate({ fetch }).searchTools('archive zeppelin', { apps: ['big'] });
    if (!found.ok) throw new Error(found.error);
    const [best] = found.tools;
    expect(best).toMatchObject({
      toolId: 'big:::zeppelins_archive',
      appId: 'big',
      name: 'zeppelins_archive',
      description: expect.stringContaining('Archive one zeppelin: it stays readable.'),
      parameters: {
        type: 'object',
        properties: { id: { type: 'string' } },
        required: ['id'],
        additionalProperties: false,
      },
      requiresUserAuth: false,
      scopes: [],
    });
    expectRanked(best as SearchedTool, 'Archive a zeppelin', 'POST', '/zeppelins/{id}/archive');
    expect(found.tools.length).toBeLessThanOrEqual(20);
    expect(sent).toHaveLength(1);
    const query = sent[0]?.url.searchParams;
    expect(sent[0]?.path).toBe('/tools');
    expect([...(query?.keys() ?? [])].sort()).toEqual(['appId', 'limit', 'q']);
    expect(query?.get('q')).toBe('archive zeppelin');
    expect(query?.get('appId')).toBe('big');
    expect(query?.get('limit')).toBe('20');
  });

  it('several apps go as `apps`, and the answer holds only their tools', async () => {
    const { fetch, sent } = recordingFetch();
    // `open` and `demo` share a document: the search for `item` matches tools of both.
    const both = await w.toolgate({ fetch }).searchTools('item', { apps: ['open', 'demo'], limit: 50 });
    if (!both.ok) throw new Error(both.error);
    expect(new Set(both.tools.map((t) => t.appId))).toEqual(new Set(['open', 'demo']));
    expect(sent[0]?.url.searchParams.get('apps')).toBe('open,demo');
    expect(sent[0]?.url.searchParams.has('appId')).toBe(false);

    const one = await w.toolgate().searchTools('item', { apps: ['open', 'big'], limit: 50 });
    if (!one.ok) throw new Error(one.error);
    expect(one.tools.map((t) => t.toolId)).toContain('open:::getItem');
    expect(one.tools.filter((t) => t.appId !== 'open' && t.appId !== 'big')).toEqual([]);

    const two = await w.toolgate().searchTools('item', { apps: ['open'], limit: 2 });
    expect(two.ok && two.tools.length).toBe(2);
  });

  it('takes the text a person writes: line breaks and control characters, a long message', async () => {
    const { fetch, sent } = recordingFetch();
    const toolgate = w.toolgate({ fetch });
    const broken = await toolgate.searchTools('archive\r\n\tzeppelin\u0007 ', { apps: ['big'] });
    expect(broken.ok && broken.tools[0]?.toolId).toBe('big:::zeppelins_archive');
    expect(sent[0]?.url.searchParams.get('q')).toBe('archive zeppelin');

    const long = await toolgate.searchTools(`archive zeppelin ${'x'.repeat(5_000)}`, { apps: ['big'] });
    expect(long.ok && long.tools[0]?.toolId).toBe('big:::zeppelins_archive');
    // Cut at the last word that fits 1,000 characters: the endless word goes.
    expect(sent[1]?.url.searchParams.get('q')).toBe('archive zeppelin');

    const blank = await toolgate.searchTools(' \n\t ', { apps: ['big'] });
    expect(blank).toEqual({ ok: true, tools: [], requestId: undefined });
    expect(sent).toHaveLength(2);
  });

  it('refuses bad arguments before any request', async () => {
    const { fetch, sent } = recordingFetch();
    const toolgate = w.toolgate({ fetch });
    const refused = (call: () => Promise<unknown>, message: string, code: string) =>
      expect(call()).rejects.toThrow(
        expect.objectContaining({ name: 'ToolgateArgumentError', code, message }) as unknown as Error,
      );
    await refused(
      () => toolgate.searchTools(''),
      '"text" must be a non-empty string',
      'ERR_INVALID_ARG_TYPE',
    );
    await refused(
      () => toolgate.searchTools(42 as unknown as string),
      '"text" must be a non-empty string',
      'ERR_INVALID_ARG_TYPE',
    );
    for (const limit of [0, 1001, 1.5]) {
      await refused(
        () => toolgate.searchTools('x', { limit }),
        'options.limit must be a whole number from 1 to 1000',
        'ERR_INVALID_ARG_VALUE',
      );
    }
    for (const apps of ['big', [''], [1]]) {
      await refused(
        () => toolgate.searchTools('x', { apps: apps as string[] }),
        'options.apps must be an array of non-empty strings',
        'ERR_INVALID_ARG_TYPE',
      );
    }
    await expect(toolgate.searchTools('x', { signal: 'now' as unknown as AbortSignal })).rejects.toThrow(
      ToolgateArgumentError,
    );
    expect(sent).toEqual([]);
  });

  it('a key the server refuses is a typed failure', async () => {
    const found = await w.toolgate({ apiKey: 'tg_key_not_a_key' }).searchTools('archive zeppelin');
    expect(found).toMatchObject({ ok: false, error: 'invalid_api_key', status: 401 });
  });
});
