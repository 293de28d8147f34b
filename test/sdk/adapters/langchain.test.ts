/**
 * @toolgate/sdk/langchain: real `StructuredTool`s of @langchain/core invoked with tool calls (as
 * an agent does) against a real toolgate server and upstream, through the auth_required round.
 */
import { ToolMessage } from '@langchain/core/messages';
import { StructuredTool } from '@langchain/core/tools';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLangChainTools } from '../../../sdk/src/langchain.ts';
import { recordingFetch, startWorld, type World } from '../world.ts';
import { proxyCalls } from './calls.ts';

describe('SDK /langchain: StructuredTools', () => {
  let w: World;
  beforeAll(async () => {
    w = await startWorld('pglite');
  });
  afterAll(async () => {
    await w?.close();
  });

  it('a StructuredTool invoked with a tool call runs through toolgate and answers a ToolMessage', async () => {
    const loaded = await createLangChainTools(w.toolgate(), { apps: ['open'] });
    if (!loaded.ok) throw new Error(loaded.error);
    const getItem = loaded.tools.find((t) => t.name === 'open__getItem');
    expect(getItem).toBeInstanceOf(StructuredTool);
    // What a chat model is given by bindTools.
    expect(convertToOpenAITool(getItem as StructuredTool)).toEqual({
      type: 'function',
      function: {
        name: 'open__getItem',
        description: 'Get an item',
        parameters: {
          type: 'object',
          properties: {
            itemId: { type: 'string', minLength: 1 },
            fields: { type: 'array', items: { type: 'string' } },
          },
          required: ['itemId'],
          additionalProperties: false,
        },
      },
    });
    const before = w.upstream.requests.length;

    const message = await getItem?.invoke({
      id: 'call_1',
      name: 'open__getItem',
      args: { itemId: 'lc-1', fields: ['title'] },
      type: 'tool_call',
    });

    expect(message).toBeInstanceOf(ToolMessage);
    const tool = message as ToolMessage;
    expect(tool.tool_call_id).toBe('call_1');
    expect(tool.name).toBe('open__getItem');
    expect(tool.content).toBe(JSON.stringify({ ok: true, data: { id: 'lc-1', title: 'An item' } }));
    expect(tool.artifact).toMatchObject({
      name: 'open__getItem',
      toolId: 'open:::getItem',
      isError: false,
      result: { ok: true, replayed: false, meta: { tool_id: 'open:::getItem' } },
    });
    expect(w.upstream.requests.slice(before).map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /items/lc-1?fields=title',
    ]);
  });

  it('auth_required round: the content carries the link; after consent the retry reuses the key and runs once', async () => {
    const { fetch, sent } = recordingFetch();
    const loaded = await createLangChainTools(w.toolgate({ fetch }), {
      userId: 'lc-ada',
      apps: ['demo'],
      authorization: { clientRedirectUri: w.receiver.url },
    });
    if (!loaded.ok) throw new Error(loaded.error);
    const getMe = loaded.tools.find((t) => t.name === 'demo__getMe') as StructuredTool;
    const meBefore = w.meCalls();

    const first = (await getMe.invoke({
      id: 'c1',
      name: 'demo__getMe',
      args: {},
      type: 'tool_call',
    })) as ToolMessage;
    const output = JSON.parse(first.content as string);
    expect(output).toEqual({
      ok: false,
      error: 'auth_required',
      app_id: 'demo',
      authorization_url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/auth\?/),
      expires_at: expect.any(String),
      message: `The user has not connected demo yet. Ask the user to open ${output.authorization_url} and allow access (the link works until ${output.expires_at}), then call demo__getMe again with the same arguments.`,
    });
    expect((first.artifact as { isError: boolean }).isError).toBe(true);
    expect(await w.consent(output.authorization_url, { account: 'ada' })).toMatchObject({
      status: 'success',
    });

    const second = (await getMe.invoke({
      id: 'c2',
      name: 'demo__getMe',
      args: {},
      type: 'tool_call',
    })) as ToolMessage;
    expect(second.content).toBe(JSON.stringify({ ok: true, data: { id: 'user-1', name: 'Ada' } }));
    expect(w.meCalls() - meBefore).toBe(1);
    const calls = proxyCalls(sent);
    expect(calls).toHaveLength(2);
    expect(calls[1]?.key).toBe(calls[0]?.key);
  });
});
