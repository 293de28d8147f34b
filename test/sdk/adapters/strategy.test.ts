/**
 * How the tools reach a model when the catalog is larger than a provider takes: the strategy each
 * adapter chooses (and why), the clear error of `strategy: 'all'` over the limit instead of a cut,
 * the per-turn selection, and the search pair (`search_tools` + `call_tool`) finding and running
 * tools through the one Toolset — against a real server with an app of 300 tools.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadToolset } from '../../../sdk/src/adapters/load.ts';
import { createAnthropicTools } from '../../../sdk/src/anthropic.ts';
import { ToolgateArgumentError } from '../../../sdk/src/index.ts';
import { createOpenAITools } from '../../../sdk/src/openai.ts';
import { recordingFetch } from '../world.ts';
import { BIG_TOOLS, type LargeWorld, startLargeWorld } from './large-world.ts';

const PAIR = ['search_tools', 'call_tool'];

/** The title a tool is found with: its summary where the server serves `title`, else its name. */
const titleOf = (summary: string, name: string) => [summary, name];

describe('SDK adapters: strategies within provider limits, and the search pair', () => {
  let w: LargeWorld;
  beforeAll(async () => {
    w = await startLargeWorld('pglite');
  });
  afterAll(async () => {
    await w?.close();
  });

  it('auto: every tool while they fit maxTools; above it the search pair, reading no further than needed', async () => {
    const small = await loadToolset(w.toolgate(), { apps: ['open'] });
    if (!small.ok) throw new Error(small.error);
    expect(small.toolset.strategy).toBe('all');
    expect(small.toolset.offered).toEqual(small.toolset.tools);
    expect(small.toolset.strategyReason).toMatch(
      /^the catalog holds \d+ tools, within options\.maxTools \(128\)$/,
    );

    const { fetch, sent } = recordingFetch();
    const large = await loadToolset(w.toolgate({ fetch }), { apps: ['big'], pageSize: 50 });
    if (!large.ok) throw new Error(large.error);
    expect(large.toolset.strategy).toBe('search');
    expect(large.toolset.strategyReason).toBe(
      'the catalog holds more than 128 tools, more than options.maxTools (128): search_tools and call_tool reach them',
    );
    expect(large.toolset.tools).toEqual([]);
    expect(large.toolset.offered.map((t) => t.name)).toEqual(PAIR);
    // 129 tools tell that it is more than 128: three pages of 50, not all six.
    expect(sent.filter((s) => s.path === '/tools')).toHaveLength(3);

    const anthropic = await createAnthropicTools(w.toolgate(), { apps: ['big'] });
    if (!anthropic.ok) throw new Error(anthropic.error);
    expect(anthropic.tools.strategy).toBe('defer');
    expect(anthropic.tools.toolset.strategyReason).toBe(
      `the catalog holds ${BIG_TOOLS} tools, more than options.maxTools (128): deferred beside Anthropic's tool search`,
    );
  });

  it("strategy 'all' over the limit throws a clear error naming the options, never a cut", async () => {
    await expect(createOpenAITools(w.toolgate(), { apps: ['big'], strategy: 'all' })).rejects.toThrow(
      new ToolgateArgumentError(
        "the catalog holds more than 128 tools, more than the 128 tool definitions OpenAI is given per request (options.maxTools): set options.strategy to 'search' (or 'auto'), or narrow the tools with options.query, options.apps or options.tools",
        'ERR_INVALID_ARG_VALUE',
      ),
    );
    await expect(createAnthropicTools(w.toolgate(), { apps: ['big'], strategy: 'all' })).rejects.toThrow(
      "set options.strategy to 'search' or 'defer' (or 'auto')",
    );
    await expect(loadToolset(w.toolgate(), { apps: ['open'], strategy: 'all', maxTools: 5 })).rejects.toThrow(
      /^the catalog holds more than 5 tools, more than the 5 tool definitions the model is given per request/,
    );
    // Within the limit, 'all' is every tool.
    const listed = await w.toolgate().listTools({ appId: 'open' });
    const fits = await createOpenAITools(w.toolgate(), { apps: ['open'], strategy: 'all' });
    expect(fits.ok && fits.tools.chatCompletions.map((t) => t.function.name)).toEqual(
      listed.ok && listed.tools.map((t) => `open__${t.name}`),
    );
  });

  it('refuses options that cannot hold: more than OpenAI takes, defer without a tool search, query with search', async () => {
    const toolgate = w.toolgate();
    await expect(createOpenAITools(toolgate, { maxTools: 129 })).rejects.toThrow(
      'options.maxTools must be a whole number from 3 to 128',
    );
    await expect(createOpenAITools(toolgate, { strategy: 'defer' as 'all' })).rejects.toThrow(
      "options.strategy 'defer' is Anthropic's tool search, which OpenAI does not have: use 'search' or 'auto'",
    );
    await expect(loadToolset(toolgate, { strategy: 'some' as 'all' })).rejects.toThrow(
      "options.strategy must be 'auto', 'all' or 'search'",
    );
    await expect(loadToolset(toolgate, { query: 'x', strategy: 'search' })).rejects.toThrow(
      "options.query chooses the tools to offer, which options.strategy 'search' does not: give one of them",
    );
    await expect(loadToolset(toolgate, { query: 'x', q: 'y' })).rejects.toThrow(
      'options.q is the former name of options.query: give one of them',
    );
    await expect(createOpenAITools(toolgate, { query: 'x', limit: 200 })).rejects.toThrow(
      'options.limit (200) is more than options.maxTools (128), the tool definitions OpenAI is given per request',
    );
    await expect(loadToolset(toolgate, { apps: ['big'], limit: 127 })).rejects.toThrow(
      'options.limit (127) is more than the 126 tools a turn may offer (options.maxTools, less the search pair)',
    );
  });

  it('query: the best tools for one task, as definitions of their own', async () => {
    const loaded = await createOpenAITools(w.toolgate(), { apps: ['big'], query: 'archive zeppelin' });
    if (!loaded.ok) throw new Error(loaded.error);
    expect(loaded.tools.strategy).toBe('all');
    expect(loaded.tools.chatCompletions[0]?.function.name).toBe('big__zeppelins_archive');
    expect(loaded.tools.chatCompletions.length).toBeLessThanOrEqual(20);
  });

  it('per turn: the user words are searched, or select answers a text or the tools', async () => {
    const loaded = await loadToolset(w.toolgate(), { apps: ['big'], limit: 5 });
    if (!loaded.ok) throw new Error(loaded.error);
    const { toolset } = loaded;
    const turn = await toolset.selectFor([
      { role: 'system', content: 'You run errands.' },
      { role: 'user', content: [{ type: 'text', text: 'archive zeppelin' }] },
      { role: 'tool', content: 'ignored' },
    ]);
    if (!turn.ok) throw new Error(turn.error);
    expect(turn.tools?.[0]?.toolId).toBe('big:::zeppelins_archive');
    expect(turn.tools?.length).toBeLessThanOrEqual(5);
    expect(toolset.offeredWith(turn.tools).map((t) => t.name)).toEqual([
      ...(turn.tools ?? []).map((t) => t.name),
      ...PAIR,
    ]);
    // Nothing to select by: the turn keeps the default definitions.
    const empty = await toolset.selectFor([{ role: 'user', content: '  ' }]);
    expect(empty).toEqual({ ok: true, tools: undefined, requestId: undefined });
    expect(toolset.offeredWith(undefined).map((t) => t.name)).toEqual(PAIR);
    // Nothing found: the default definitions too, never an empty list (providers refuse `tools: []`).
    const none = await toolset.selectFor('quokka');
    expect(none.ok && none.tools).toEqual([]);
    expect(toolset.offeredWith([]).map((t) => t.name)).toEqual(PAIR);
    const small = await loadToolset(w.toolgate(), { apps: ['open'] });
    if (!small.ok) throw new Error(small.error);
    expect(small.toolset.offeredWith([])).toEqual(small.toolset.tools);

    const toolgate = w.toolgate();
    const views = await toolgate.searchTools('remove invoice', { apps: ['big'], limit: 1 });
    if (!views.ok) throw new Error(views.error);
    const seen: string[] = [];
    const chosen = await loadToolset(toolgate, {
      apps: ['big'],
      select: (t) => {
        seen.push(t.text);
        return t.text === 'tools please' ? views.tools : `${t.text} zeppelin`;
      },
    });
    if (!chosen.ok) throw new Error(chosen.error);
    const byText = await chosen.toolset.selectFor('archive');
    expect(byText.ok && byText.tools?.[0]?.toolId).toBe('big:::zeppelins_archive');
    const byTools = await chosen.toolset.selectFor('tools please');
    expect(byTools.ok && byTools.tools?.map((t) => t.toolId)).toEqual(['big:::invoices_remove']);
    expect(seen).toEqual(['archive', 'tools please']);

    const greedy = await loadToolset(toolgate, {
      apps: ['big'],
      select: () => Array(127).fill(views.tools[0]),
    });
    if (!greedy.ok) throw new Error(greedy.error);
    await expect(greedy.toolset.selectFor('x')).rejects.toThrow(
      'options.select answered 127 tools, more than the 126 a turn may offer (options.maxTools, less the search pair)',
    );
  });

  it('search pair: search_tools finds, call_tool runs what it found (by name or toolId), within the apps', async () => {
    const loaded = await loadToolset(w.toolgate(), { apps: ['big'], strategy: 'search' });
    if (!loaded.ok) throw new Error(loaded.error);
    const { toolset } = loaded;
    expect(toolset.offered.map((t) => t.name)).toEqual(PAIR);
    expect(toolset.offered[0]?.description).toMatch(/Tools of: big\.$/);

    const search = await toolset.call('search_tools', { query: 'archive zeppelin', apps: null, limit: null });
    expect(search.isError).toBe(false);
    const found = (search.output as { data: { tools: Array<Record<string, unknown>> } }).data.tools;
    expect(found[0]).toEqual({
      name: 'big__zeppelins_archive',
      toolId: 'big:::zeppelins_archive',
      title: expect.toBeOneOf(titleOf('Archive a zeppelin', 'zeppelins_archive')),
      description: expect.stringContaining('Archive one zeppelin: it stays readable.'),
      inputSchema: {
        type: 'object',
        properties: { id: { type: 'string' } },
        required: ['id'],
        additionalProperties: false,
      },
      requiresUserAuth: false,
    });
    expect(found.length).toBeLessThanOrEqual(8);

    const before = w.echo.requests.length;
    const ran = await toolset.call('call_tool', { name: 'big__zeppelins_archive', arguments: { id: 'z-1' } });
    expect(ran).toMatchObject({
      name: 'call_tool',
      toolId: 'big:::zeppelins_archive',
      isError: false,
      output: { ok: true, data: { received: true } },
      result: { ok: true, meta: { tool_id: 'big:::zeppelins_archive' } },
    });
    const byId = await toolset.call('call_tool', { name: 'big:::kayaks_get', arguments: { id: 'k 1' } });
    expect(byId.output).toEqual({ ok: true, data: { received: true } });
    expect(w.echo.requests.slice(before).map((r) => `${r.method} ${r.url}`)).toEqual([
      'POST /zeppelins/z-1/archive',
      'GET /kayaks/k%201',
    ]);

    const unknown = {
      ok: false,
      error: 'tool_not_found',
      message:
        'There is no tool named open:::getItem among those found; find it with search_tools, then call call_tool with the name it answers.',
    };
    expect((await toolset.call('call_tool', { name: 'open:::getItem', arguments: {} })).output).toEqual(
      unknown,
    );
    expect((await toolset.call('call_tool', { name: 'big__nope', arguments: {} })).output).toMatchObject({
      error: 'tool_not_found',
      message: expect.stringContaining('find it with search_tools'),
    });
    expect((await toolset.call('search_tools', { query: ' ' })).output).toEqual({
      ok: false,
      error: 'invalid_parameters',
      message: 'search_tools needs a query: the task, in words.',
    });
    expect((await toolset.call('search_tools', { query: 'x', limit: 21 })).output).toMatchObject({
      error: 'invalid_parameters',
      message: 'limit of search_tools must be a whole number from 1 to 20.',
    });
    const outside = await toolset.call('search_tools', { query: 'item', apps: ['open'] });
    expect(outside.output).toEqual({ ok: true, data: { tools: [] } });
    expect(
      (await toolset.call('call_tool', { name: 'big__zeppelins_archive', arguments: 'z-1' })).output,
    ).toEqual({
      ok: false,
      error: 'invalid_parameters',
      message: 'The arguments of big__zeppelins_archive (arguments of call_tool) must be a JSON object.',
    });
    // `arguments` is required, as the definition says: a misnamed key is not a call with no arguments.
    const beforeMisnamed = w.echo.requests.length;
    expect(
      (await toolset.call('call_tool', { name: 'big__zeppelins_archive', args: { id: 'z-1' } })).output,
    ).toEqual({
      ok: false,
      error: 'invalid_parameters',
      message:
        'call_tool needs the arguments of big__zeppelins_archive: a JSON object ({} when it takes none).',
    });
    expect(w.echo.requests.length).toBe(beforeMisnamed);
    // A direct call of a tool the search found works too (a turn's selection offers it by name).
    expect((await toolset.call('big__zeppelins_archive', { id: 'z-2' })).output).toEqual({
      ok: true,
      data: { received: true },
    });
  });
});
