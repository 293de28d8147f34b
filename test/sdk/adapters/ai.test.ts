/**
 * @toolgate/sdk/ai with the real AI SDK: its own mock language model (`ai/test`) drives
 * `generateText` through tool calls that run on a real toolgate server and a real upstream, and
 * through the auth_required round with the real OAuth provider.
 */
import { generateText, stepCountIs, streamText } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV3 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAiTools } from '../../../sdk/src/ai.ts';
import { recordingFetch, startWorld, type World } from '../world.ts';
import { proxyCalls } from './calls.ts';

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** A model that calls one tool, then answers `text` once it has seen the result. */
function modelCalling(toolName: string, input: unknown, text = 'done') {
  return new MockLanguageModelV3({
    doGenerate: [
      {
        content: [{ type: 'tool-call', toolCallId: 'call-1', toolName, input: JSON.stringify(input) }],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      },
      {
        content: [{ type: 'text', text }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage,
        warnings: [],
      },
    ],
  });
}

describe('SDK /ai: tools for the Vercel AI SDK', () => {
  let w: World;
  beforeAll(async () => {
    w = await startWorld('pglite');
  });
  afterAll(async () => {
    await w?.close();
  });

  it('generateText calls a tool through toolgate and the model reads its result', async () => {
    const loaded = await createAiTools(w.toolgate(), { apps: ['open'] });
    if (!loaded.ok) throw new Error(loaded.error);
    expect(Object.keys(loaded.tools)).toContain('open__getItem');
    const model = modelCalling('open__getItem', { itemId: 'ai-1' });
    const before = w.upstream.requests.length;

    const result = await generateText({
      model,
      tools: loaded.tools,
      prompt: 'What is item ai-1?',
      stopWhen: stepCountIs(3),
    });

    expect(result.text).toBe('done');
    const upstream = w.upstream.requests.slice(before);
    expect(upstream.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /items/ai-1']);
    expect(result.steps[0]?.toolResults).toEqual([
      expect.objectContaining({
        type: 'tool-result',
        toolCallId: 'call-1',
        toolName: 'open__getItem',
        input: { itemId: 'ai-1' },
        output: { ok: true, data: { id: 'ai-1', title: 'An item' } },
        dynamic: true,
      }),
    ]);
    // What the model was offered: the function name and the portable schema.
    const offered = model.doGenerateCalls[0]?.tools?.find((t) => t.name === 'open__getItem');
    expect(offered).toEqual({
      type: 'function',
      name: 'open__getItem',
      description: 'Get an item',
      inputSchema: {
        type: 'object',
        properties: {
          itemId: { type: 'string', minLength: 1 },
          fields: { type: 'array', items: { type: 'string' } },
        },
        required: ['itemId'],
        additionalProperties: false,
      },
    });
    // What the model read back in the next step.
    const toolMessage = model.doGenerateCalls[1]?.prompt.find((m) => m.role === 'tool');
    expect(toolMessage?.content).toEqual([
      expect.objectContaining({
        type: 'tool-result',
        toolCallId: 'call-1',
        toolName: 'open__getItem',
        output: { type: 'json', value: { ok: true, data: { id: 'ai-1', title: 'An item' } } },
      }),
    ]);
  });

  it('streamText runs the same tools', async () => {
    const loaded = await createAiTools(w.toolgate(), { tools: ['open:::getItem'] });
    if (!loaded.ok) throw new Error(loaded.error);
    const finish = (unified: 'tool-calls' | 'stop') => ({
      type: 'finish' as const,
      finishReason: { unified, raw: undefined },
      usage,
    });
    const model = new MockLanguageModelV3({
      doStream: [
        {
          stream: convertArrayToReadableStream([
            { type: 'stream-start', warnings: [] },
            {
              type: 'tool-call',
              toolCallId: 'call-s',
              toolName: 'open__getItem',
              input: '{"itemId":"stream-1"}',
            },
            finish('tool-calls'),
          ]),
        },
        {
          stream: convertArrayToReadableStream([
            { type: 'stream-start', warnings: [] },
            { type: 'text-start', id: 't' },
            { type: 'text-delta', id: 't', delta: 'streamed' },
            { type: 'text-end', id: 't' },
            finish('stop'),
          ]),
        },
      ],
    });
    const result = streamText({ model, tools: loaded.tools, prompt: 'Item?', stopWhen: stepCountIs(3) });
    expect(await result.text).toBe('streamed');
    const steps = await result.steps;
    expect(steps[0]?.toolResults.map((r) => r.output)).toEqual([
      { ok: true, data: { id: 'stream-1', title: 'An item' } },
    ]);
  });

  it('auth_required: the model gets the link, the user connects, the retry runs once with the same key', async () => {
    const { fetch, sent } = recordingFetch();
    const loaded = await createAiTools(w.toolgate({ fetch }), {
      userId: 'ai-ada',
      apps: ['demo'],
      authorization: { clientRedirectUri: w.receiver.url },
    });
    if (!loaded.ok) throw new Error(loaded.error);
    const meBefore = w.meCalls();

    const first = await generateText({
      model: modelCalling('demo__getMe', {}, 'Please connect demo.'),
      tools: loaded.tools,
      prompt: 'Who am I?',
      stopWhen: stepCountIs(3),
    });
    const output = first.steps[0]?.toolResults[0]?.output as Record<string, string>;
    const url = output.authorization_url as string;
    expect(url.startsWith(`${w.provider.authorizationUrl}?`)).toBe(true);
    expect(output).toEqual({
      ok: false,
      error: 'auth_required',
      app_id: 'demo',
      authorization_url: url,
      expires_at: expect.any(String),
      message: `The user has not connected demo yet. Ask the user to open ${url} and allow access (the link works until ${output.expires_at}), then call demo__getMe again with the same arguments.`,
    });
    expect(w.meCalls()).toBe(meBefore);

    expect(await w.consent(url, { account: 'ada' })).toMatchObject({ status: 'success' });

    const second = await generateText({
      model: modelCalling('demo__getMe', {}),
      tools: loaded.tools,
      prompt: 'Who am I?',
      stopWhen: stepCountIs(3),
    });
    expect(second.steps[0]?.toolResults[0]?.output).toEqual({
      ok: true,
      data: { id: 'user-1', name: 'Ada' },
    });
    expect(w.meCalls() - meBefore).toBe(1);
    const calls = proxyCalls(sent);
    expect(calls.map((c) => c.toolId)).toEqual(['demo:::getMe', 'demo:::getMe']);
    expect(calls[0]?.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(calls[1]?.key).toBe(calls[0]?.key);
    expect(calls.every((c) => c.userId === 'ai-ada')).toBe(true);
  });

  it('authorization.wait: the tool call waits for the user and answers the result', async () => {
    const links: string[] = [];
    const loaded = await createAiTools(w.toolgate(), {
      userId: 'ai-bo',
      tools: ['demo:::getMe'],
      authorization: {
        clientRedirectUri: w.receiver.url,
        wait: {
          onAuthorizationUrl: async (url) => {
            links.push(url);
            await w.consent(url, { account: 'bo' });
          },
          pollIntervalMs: 25,
          maxPollIntervalMs: 100,
          timeoutMs: 20_000,
        },
      },
    });
    if (!loaded.ok) throw new Error(loaded.error);
    expect(Object.keys(loaded.tools)).toEqual(['demo__getMe']);
    const meBefore = w.meCalls();
    const result = await generateText({
      model: modelCalling('demo__getMe', {}),
      tools: loaded.tools,
      prompt: 'Who am I?',
      stopWhen: stepCountIs(3),
    });
    expect(links).toHaveLength(1);
    expect(result.steps[0]?.toolResults[0]?.output).toEqual({
      ok: true,
      data: { id: 'user-1', name: 'Ada' },
    });
    expect(w.meCalls() - meBefore).toBe(1);
  });

  it('a failure reaches the model as an actionable output, not an exception', async () => {
    const loaded = await createAiTools(w.toolgate(), { tools: ['open:::createItem'] });
    if (!loaded.ok) throw new Error(loaded.error);
    const result = await generateText({
      model: modelCalling('open__createItem', { body: { title: '' } }),
      tools: loaded.tools,
      prompt: 'Create an item',
      stopWhen: stepCountIs(3),
    });
    expect(result.steps[0]?.toolResults[0]?.output).toEqual({
      ok: false,
      error: 'invalid_parameters',
      issues: [{ path: '/body/title', message: expect.any(String) }],
      message: expect.stringMatching(
        /^The arguments do not fit open__createItem's parameters \(\/body\/title: .+\)\. Correct them and call it again\.$/,
      ),
    });
  });
});
