/**
 * @toolgate/sdk/openai: function definitions for Chat Completions and the Responses API, and
 * handleToolCalls fed with answers typed by the official `openai` package, run against a real
 * toolgate server and upstream (and the real OAuth provider for the auth_required round).
 */

import type { ChatCompletion, ChatCompletionMessageToolCall } from 'openai/resources/chat/completions';
import type { Response, ResponseOutputItem } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAITools, type OpenAITools } from '../../../sdk/src/openai.ts';
import { recordingFetch, startWorld, type World } from '../world.ts';
import { proxyCalls } from './calls.ts';

function chatCompletion(calls: Array<[id: string, name: string, args: string]>): ChatCompletion {
  const toolCalls: ChatCompletionMessageToolCall[] = calls.map(([id, name, args]) => ({
    id,
    type: 'function',
    function: { name, arguments: args },
  }));
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1_763_800_000,
    model: 'gpt-5',
    choices: [
      {
        index: 0,
        finish_reason: 'tool_calls',
        logprobs: null,
        message: { role: 'assistant', content: null, refusal: null, tool_calls: toolCalls },
      },
    ],
  };
}

function responsesAnswer(output: ResponseOutputItem[]): Response {
  return {
    id: 'resp_1',
    object: 'response',
    created_at: 1_763_800_000,
    model: 'gpt-5',
    output,
    output_text: '',
    error: null,
    incomplete_details: null,
    instructions: null,
    metadata: null,
    parallel_tool_calls: true,
    temperature: null,
    tool_choice: 'auto',
    tools: [],
    top_p: null,
  };
}

describe('SDK /openai: function definitions and handleToolCalls', () => {
  let w: World;
  let tools: OpenAITools;
  beforeAll(async () => {
    w = await startWorld('pglite');
    const loaded = await createOpenAITools(w.toolgate(), { apps: ['open'] });
    if (!loaded.ok) throw new Error(loaded.error);
    tools = loaded.tools;
  });
  afterAll(async () => {
    await w?.close();
  });

  it('defines strict functions where the schema allows it, non-strict with the reason otherwise', () => {
    const getItem = tools.chatCompletions.find((t) => t.function.name === 'open__getItem');
    expect(getItem).toEqual({
      type: 'function',
      function: {
        name: 'open__getItem',
        description: 'Get an item',
        parameters: {
          type: 'object',
          properties: {
            itemId: { type: 'string' },
            fields: { type: ['array', 'null'], items: { type: 'string' } },
          },
          required: ['itemId', 'fields'],
          additionalProperties: false,
        },
        strict: true,
      },
    });
    expect(tools.responses.find((t) => t.name === 'open__getItem')).toEqual({
      type: 'function',
      ...getItem?.function,
    });
    // `filter` is a map (additionalProperties: {type: string}): strict mode cannot express it.
    expect(tools.strictness.get('open__listItems')).toEqual({
      strict: false,
      reason: 'the object at /properties/filter has no fixed properties',
    });
    const listItems = tools.chatCompletions.find((t) => t.function.name === 'open__listItems');
    expect(listItems?.function.strict).toBe(false);
    expect(listItems?.function.parameters).not.toHaveProperty('$schema');
    expect(tools.strictness.get('open__createItem')).toEqual({ strict: true });
    for (const tool of tools.chatCompletions) expect(tool.function.name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
  });

  it('Chat Completions: runs each call of ours, drops strict-mode nulls, answers tool messages in order', async () => {
    const before = w.upstream.requests.length;
    const completion = chatCompletion([
      ['call_a', 'open__createItem', JSON.stringify({ body: { title: 'From OpenAI', labels: null } })],
      ['call_b', 'open__getItem', '{"itemId":"oa-1","fields":null}'],
      ['call_c', 'my_own_tool', '{}'],
      ['call_d', 'open__getItem', '{"itemId":'],
    ]);

    const messages = await tools.handleToolCalls(completion);

    expect(messages).toEqual([
      {
        role: 'tool',
        tool_call_id: 'call_a',
        content: JSON.stringify({ ok: true, data: { id: 'item-1', title: 'From OpenAI' } }),
      },
      {
        role: 'tool',
        tool_call_id: 'call_b',
        content: JSON.stringify({ ok: true, data: { id: 'oa-1', title: 'An item' } }),
      },
      {
        role: 'tool',
        tool_call_id: 'call_d',
        content: JSON.stringify({
          ok: false,
          error: 'invalid_parameters',
          message: 'The arguments of open__getItem must be a JSON object.',
        }),
      },
    ]);
    const upstream = w.upstream.requests
      .slice(before)
      .map((r) => `${r.method} ${r.url} ${r.body}`)
      .sort();
    expect(upstream).toEqual(['GET /items/oa-1 ', 'POST /items {"title":"From OpenAI"}']);
    // The message alone works as well as the whole completion.
    const again = await tools.handleToolCalls(
      chatCompletion([['call_e', 'open__getItem', '{"itemId":"oa-2","fields":["title"]}']]).choices[0]
        ?.message as ChatCompletion['choices'][number]['message'],
    );
    expect(again).toEqual([
      {
        role: 'tool',
        tool_call_id: 'call_e',
        content: JSON.stringify({ ok: true, data: { id: 'oa-2', title: 'An item' } }),
      },
    ]);
    expect(w.upstream.requests.at(-1)?.url).toBe('/items/oa-2?fields=title');
  });

  it('Responses API: function_call items → function_call_output items', async () => {
    const before = w.upstream.requests.length;
    const response = responsesAnswer([
      {
        type: 'reasoning',
        id: 'rs_1',
        summary: [],
      },
      {
        type: 'function_call',
        id: 'fc_1',
        call_id: 'call_1',
        name: 'open__echo',
        arguments: JSON.stringify({ q: 'hello', 'X-Trace-Id': 'trace-1', 'X-Tags': null, theme: null }),
        status: 'completed',
      },
    ]);

    const outputs = await tools.handleToolCalls(response);

    expect(outputs).toHaveLength(1);
    expect(outputs[0]).toEqual({
      type: 'function_call_output',
      call_id: 'call_1',
      output: expect.any(String),
    });
    const echoed = JSON.parse(outputs[0]?.output as string);
    expect(echoed.ok).toBe(true);
    expect(echoed.data).toMatchObject({
      method: 'GET',
      query: 'q=hello',
      headers: { 'x-trace-id': 'trace-1' },
    });
    expect(echoed.data.headers).not.toHaveProperty('cookie');
    const received = w.upstream.requests.slice(before);
    expect(received.map((r) => r.url)).toEqual(['/echo?q=hello']);
  });

  it('auth_required round: the tool message carries the link; after consent the retry reuses the key and runs once', async () => {
    const { fetch, sent } = recordingFetch();
    const loaded = await createOpenAITools(w.toolgate({ fetch }), {
      userId: 'oa-ada',
      apps: ['demo'],
      authorization: { clientRedirectUri: w.receiver.url },
    });
    if (!loaded.ok) throw new Error(loaded.error);
    const meBefore = w.meCalls();

    const [first] = await loaded.tools.handleToolCalls(chatCompletion([['call_1', 'demo__getMe', '{}']]));
    const output = JSON.parse(first?.content as string);
    expect(first?.tool_call_id).toBe('call_1');
    expect(output).toEqual({
      ok: false,
      error: 'auth_required',
      app_id: 'demo',
      authorization_url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/auth\?/),
      expires_at: expect.any(String),
      message: expect.stringContaining(output.authorization_url),
    });
    expect(await w.consent(output.authorization_url, { account: 'ada' })).toMatchObject({
      status: 'success',
    });

    const [second] = await loaded.tools.handleToolCalls(
      responsesAnswer([
        {
          type: 'function_call',
          call_id: 'call_2',
          name: 'demo__getMe',
          arguments: '{}',
          status: 'completed',
        },
      ]),
    );
    expect(second).toEqual({
      type: 'function_call_output',
      call_id: 'call_2',
      output: JSON.stringify({ ok: true, data: { id: 'user-1', name: 'Ada' } }),
    });
    expect(w.meCalls() - meBefore).toBe(1);
    const calls = proxyCalls(sent);
    expect(calls).toHaveLength(2);
    expect(calls[1]?.key).toBe(calls[0]?.key);
    expect(sent.filter((s) => s.path === '/initiateOAuth')).toHaveLength(1);
  });
});
