/**
 * A catalog larger than a provider takes, through the official `openai` and `@anthropic-ai/sdk`
 * clients pointed at a loopback provider that records every request: OpenAI never receives more
 * than 128 definitions (the search pair finds and runs a tool end to end, `auth_required` included);
 * Anthropic receives every tool `defer_loading` beside its tool search tool — against a real
 * toolgate server with an app of 300 tools and the real OAuth provider.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAnthropicTools } from '../../../sdk/src/anthropic.ts';
import { createOpenAITools } from '../../../sdk/src/openai.ts';
import { recordingFetch } from '../world.ts';
import { proxyCalls } from './calls.ts';
import { BIG_TOOLS, type LargeWorld, startLargeWorld } from './large-world.ts';
import { type ProviderStub, startProviderStub } from './provider-stub.ts';

const PAIR = ['search_tools', 'call_tool'];

function completion(call?: [id: string, name: string, args: unknown], text?: string): ChatCompletion {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1_763_800_000,
    model: 'gpt-5',
    choices: [
      {
        index: 0,
        finish_reason: call ? 'tool_calls' : 'stop',
        logprobs: null,
        message: {
          role: 'assistant',
          content: text ?? null,
          refusal: null,
          ...(call
            ? {
                tool_calls: [
                  {
                    id: call[0],
                    type: 'function',
                    function: { name: call[1], arguments: JSON.stringify(call[2]) },
                  },
                ],
              }
            : {}),
        },
      },
    ],
  };
}

/** The function names of each request the provider received. */
function offered(stub: ProviderStub): string[][] {
  return stub.requests.map((r) =>
    (r.body.tools as Array<{ name?: string; function?: { name: string } }>).map(
      (t) => t.function?.name ?? t.name ?? '',
    ),
  );
}

describe('SDK adapters: a catalog over the provider limits, through the providers’ own clients', () => {
  let w: LargeWorld;
  let stub: ProviderStub;
  beforeAll(async () => {
    [w, stub] = await Promise.all([startLargeWorld('pglite'), startProviderStub()]);
  });
  afterAll(async () => {
    await w?.close();
    await stub?.close();
  });

  it('OpenAI: 300 tools reach the model as search_tools + call_tool; the model finds a tool and runs it', async () => {
    const loaded = await createOpenAITools(w.toolgate(), { apps: ['big'] });
    if (!loaded.ok) throw new Error(loaded.error);
    const { tools } = loaded;
    expect(tools.strategy).toBe('search');
    expect(tools.strictness.get('search_tools')).toEqual({ strict: true });
    expect(tools.strictness.get('call_tool')).toEqual({ strict: false, reason: expect.any(String) });
    const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${stub.url}/v1`, maxRetries: 0 });
    stub.requests.length = 0;
    stub.reply(
      completion(['call_1', 'search_tools', { query: 'archive zeppelin', apps: null, limit: null }]),
      completion(['call_2', 'call_tool', { name: 'big__zeppelins_archive', arguments: { id: 'z-9' } }]),
      completion(undefined, 'Archived.'),
    );
    const before = w.echo.requests.length;
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'Archive zeppelin z-9' }];
    let answer = '';
    for (let turn = 0; turn < 5; turn += 1) {
      const reply = await openai.chat.completions.create({
        model: 'gpt-5',
        messages,
        tools: tools.chatCompletions,
      });
      const message = reply.choices[0]?.message;
      if (!message) throw new Error('no message');
      messages.push(message);
      if (!message.tool_calls?.length) {
        answer = message.content ?? '';
        break;
      }
      messages.push(...(await tools.handleToolCalls(reply)));
    }

    expect(answer).toBe('Archived.');
    expect(stub.requests.map((r) => r.path)).toEqual(Array(3).fill('/v1/chat/completions'));
    expect(offered(stub)).toEqual([PAIR, PAIR, PAIR]);
    const searchTool = (
      stub.requests[0]?.body.tools as Array<{ function: Record<string, unknown> }> | undefined
    )?.[0];
    expect(searchTool?.function).toMatchObject({
      name: 'search_tools',
      strict: true,
      parameters: {
        type: 'object',
        required: ['query', 'apps', 'limit'],
        additionalProperties: false,
        properties: {
          query: { type: 'string' },
          apps: { type: ['array', 'null'] },
          limit: { type: ['integer', 'null'] },
        },
      },
    });
    const found = JSON.parse(messages[2]?.content as string);
    expect(found.data.tools[0]).toMatchObject({
      name: 'big__zeppelins_archive',
      toolId: 'big:::zeppelins_archive',
    });
    expect(messages[4]).toEqual({
      role: 'tool',
      tool_call_id: 'call_2',
      content: JSON.stringify({ ok: true, data: { received: true } }),
    });
    expect(w.echo.requests.slice(before).map((r) => `${r.method} ${r.url}`)).toEqual([
      'POST /zeppelins/z-9/archive',
    ]);
  });

  it('OpenAI per turn: the tools that fit the turn beside the pair, never more than 128; their calls run', async () => {
    const loaded = await createOpenAITools(w.toolgate(), { apps: ['big'] });
    if (!loaded.ok) throw new Error(loaded.error);
    const turn = await loaded.tools.forTurn([{ role: 'user', content: 'archive zeppelin' }]);
    if (!turn.ok) throw new Error(turn.error);
    const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${stub.url}/v1`, maxRetries: 0 });
    stub.requests.length = 0;
    stub.reply({
      id: 'resp_1',
      object: 'response',
      created_at: 1_763_800_000,
      model: 'gpt-5',
      status: 'completed',
      output: [
        {
          type: 'function_call',
          id: 'fc_1',
          call_id: 'call_1',
          name: 'big__zeppelins_archive',
          arguments: '{"id":"z-7"}',
          status: 'completed',
        },
      ],
    });
    const response = await openai.responses.create({
      model: 'gpt-5',
      input: 'archive zeppelin',
      tools: turn.responses,
    });
    const names = offered(stub)[0] ?? [];
    expect(names[0]).toBe('big__zeppelins_archive');
    expect(names.slice(-2)).toEqual(PAIR);
    expect(names.length).toBeLessThanOrEqual(22);
    expect(turn.chatCompletions.map((t) => t.function.name)).toEqual(names);

    const before = w.echo.requests.length;
    expect(await loaded.tools.handleToolCalls(response)).toEqual([
      {
        type: 'function_call_output',
        call_id: 'call_1',
        output: JSON.stringify({ ok: true, data: { received: true } }),
      },
    ]);
    expect(w.echo.requests.slice(before).map((r) => r.url)).toEqual(['/zeppelins/z-7/archive']);
  });

  it('the search pair through auth_required: the link, consent, then call_tool again runs the tool once', async () => {
    const { fetch, sent } = recordingFetch();
    const loaded = await createOpenAITools(w.toolgate({ fetch }), {
      userId: 'pair-ada',
      apps: ['demo'],
      strategy: 'search',
      authorization: { clientRedirectUri: w.receiver.url },
    });
    if (!loaded.ok) throw new Error(loaded.error);
    const { tools } = loaded;
    const meBefore = w.meCalls();

    const [search] = await tools.handleToolCalls(
      completion(['c1', 'search_tools', { query: 'signed-in user', apps: null, limit: 3 }]),
    );
    const found = JSON.parse(search?.content as string).data.tools;
    expect(found[0]).toMatchObject({ name: 'demo__getMe', toolId: 'demo:::getMe', requiresUserAuth: true });

    const call = completion(['c2', 'call_tool', { name: 'demo__getMe', arguments: {} }]);
    const [first] = await tools.handleToolCalls(call);
    const output = JSON.parse(first?.content as string);
    expect(output).toEqual({
      ok: false,
      error: 'auth_required',
      app_id: 'demo',
      authorization_url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/auth\?/),
      expires_at: expect.any(String),
      message: `The user has not connected demo yet. Ask the user to open ${output.authorization_url} and allow access (the link works until ${output.expires_at}), then call call_tool again with name demo__getMe and the same arguments.`,
    });
    expect(w.meCalls()).toBe(meBefore);
    expect(await w.consent(output.authorization_url, { account: 'ada' })).toMatchObject({
      status: 'success',
    });

    const [second] = await tools.handleToolCalls(call);
    expect(second).toEqual({
      role: 'tool',
      tool_call_id: 'c2',
      content: JSON.stringify({ ok: true, data: { id: 'user-1', name: 'Ada' } }),
    });
    expect(w.meCalls() - meBefore).toBe(1);
    const calls = proxyCalls(sent);
    expect(calls.map((c) => c.toolId)).toEqual(['demo:::getMe', 'demo:::getMe']);
    expect(calls[1]?.key).toBe(calls[0]?.key);
    expect(calls.every((c) => c.userId === 'pair-ada')).toBe(true);
  });

  it('Anthropic: every tool defer_loading beside the tool search tool; a tool it loads runs', async () => {
    const loaded = await createAnthropicTools(w.toolgate(), { apps: ['big'] });
    if (!loaded.ok) throw new Error(loaded.error);
    const { tools } = loaded;
    expect(tools.strategy).toBe('defer');
    const anthropic = new Anthropic({ apiKey: 'sk-ant-test', baseURL: stub.url, maxRetries: 0 });
    stub.requests.length = 0;
    stub.reply({
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-6',
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 5 },
      content: [
        {
          type: 'server_tool_use',
          id: 'srvtoolu_1',
          name: 'tool_search_tool_bm25',
          input: { query: 'archive zeppelin' },
        },
        {
          type: 'tool_search_tool_result',
          tool_use_id: 'srvtoolu_1',
          content: {
            type: 'tool_search_tool_search_result',
            tool_references: [{ type: 'tool_reference', tool_name: 'big__zeppelins_archive' }],
          },
        },
        { type: 'tool_use', id: 'toolu_1', name: 'big__zeppelins_archive', input: { id: 'z-3' } },
      ],
    });
    const message = await anthropic.messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 1024,
      messages: [{ role: 'user', content: 'Archive zeppelin z-3' }],
      tools: tools.definitions,
    });
    const sentTools = stub.requests[0]?.body.tools as Array<Record<string, unknown>>;
    expect(sentTools).toHaveLength(BIG_TOOLS + 1);
    expect(sentTools[0]).toEqual({ type: 'tool_search_tool_bm25_20251119', name: 'tool_search_tool_bm25' });
    expect(
      sentTools.slice(1).every((t) => t.defer_loading === true && typeof t.input_schema === 'object'),
    ).toBe(true);
    expect(sentTools.find((t) => t.name === 'big__zeppelins_archive')).toEqual({
      name: 'big__zeppelins_archive',
      description: expect.stringContaining('Archive one zeppelin: it stays readable.'),
      input_schema: {
        type: 'object',
        properties: { id: { type: 'string' } },
        required: ['id'],
        additionalProperties: false,
      },
      defer_loading: true,
    });

    const before = w.echo.requests.length;
    expect(await tools.handleToolUses(message)).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_1',
        content: JSON.stringify({ ok: true, data: { received: true } }),
      },
    ]);
    expect(w.echo.requests.slice(before).map((r) => `${r.method} ${r.url}`)).toEqual([
      'POST /zeppelins/z-3/archive',
    ]);
  });

  it("Anthropic: regex tool search; a turn's tools loaded and the rest deferred; the search pair when chosen", async () => {
    const regex = await createAnthropicTools(w.toolgate(), { apps: ['big'], toolSearch: 'regex' });
    if (!regex.ok) throw new Error(regex.error);
    expect(regex.tools.definitions[0]).toEqual({
      type: 'tool_search_tool_regex_20251119',
      name: 'tool_search_tool_regex',
    });

    const turn = await regex.tools.forTurn([{ role: 'user', content: 'archive zeppelin' }]);
    if (!turn.ok) throw new Error(turn.error);
    const loadedNames = (turn.selected ?? []).map((t) => t.name);
    expect(loadedNames[0]).toBe('big__zeppelins_archive');
    expect(turn.definitions).toHaveLength(BIG_TOOLS + 1);
    const deferred = (name: string) => turn.definitions.find((d) => d.name === name)?.defer_loading;
    expect(deferred('big__zeppelins_archive')).toBeUndefined();
    expect(deferred('big__invoices_remove')).toBe(
      loadedNames.includes('big__invoices_remove') ? undefined : true,
    );
    expect(turn.definitions.filter((d) => d.defer_loading !== true).length).toBe(loadedNames.length + 1);

    const pair = await createAnthropicTools(w.toolgate(), { apps: ['big'], strategy: 'search' });
    if (!pair.ok) throw new Error(pair.error);
    expect(pair.tools.definitions.map((d) => d.name)).toEqual(PAIR);
    expect(pair.tools.definitions[1]).toMatchObject({
      name: 'call_tool',
      input_schema: { type: 'object', required: ['name', 'arguments'] },
    });
    await expect(createAnthropicTools(w.toolgate(), { toolSearch: 'fuzzy' as 'regex' })).rejects.toThrow(
      "options.toolSearch must be 'bm25' or 'regex'",
    );
  });
});
