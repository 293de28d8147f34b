/**
 * @toolgate/sdk/anthropic: Messages API tools, and handleToolUses fed with a `Message` typed by
 * the official `@anthropic-ai/sdk`, against a real toolgate server and upstream (and the real
 * OAuth provider for the auth_required round).
 */

import type { ContentBlock, Message } from '@anthropic-ai/sdk/resources/messages/messages';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAnthropicTools } from '../../../sdk/src/anthropic.ts';
import { recordingFetch, startWorld, type World } from '../world.ts';
import { proxyCalls } from './calls.ts';

function toolUse(id: string, name: string, input: unknown): ContentBlock {
  return { type: 'tool_use', id, name, input, caller: { type: 'direct' } };
}

function message(content: ContentBlock[]): Message {
  return {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content,
    container: null,
    stop_reason: 'tool_use',
    stop_sequence: null,
    stop_details: null,
    diagnostics: null,
    usage: {
      input_tokens: 10,
      output_tokens: 5,
      cache_creation_input_tokens: null,
      cache_read_input_tokens: null,
      cache_creation: null,
      server_tool_use: null,
      service_tier: null,
      inference_geo: null,
    },
  } as Message;
}

describe('SDK /anthropic: Messages API tools and tool_result blocks', () => {
  let w: World;
  beforeAll(async () => {
    w = await startWorld('pglite');
  });
  afterAll(async () => {
    await w?.close();
  });

  it('defines tools with portable input schemas; strict on request where expressible', async () => {
    const plain = await createAnthropicTools(w.toolgate(), {
      tools: ['open:::getItem', 'open:::createItem'],
    });
    if (!plain.ok) throw new Error(plain.error);
    const listed = await w.toolgate().listTools({ appId: 'open' });
    const served = (name: string) => {
      const view = listed.ok ? listed.tools.find((t) => t.name === name) : undefined;
      const { $schema, ...rest } = view?.parameters ?? {};
      expect($schema).toBe('https://json-schema.org/draft/2020-12/schema');
      return rest;
    };
    expect(plain.tools.definitions.map((t) => t.name).sort()).toEqual(['open__createItem', 'open__getItem']);
    expect(plain.tools.definitions.find((t) => t.name === 'open__getItem')).toEqual({
      name: 'open__getItem',
      description: 'Get an item',
      input_schema: {
        type: 'object',
        properties: {
          itemId: { type: 'string', minLength: 1 },
          fields: { type: 'array', items: { type: 'string' } },
        },
        required: ['itemId'],
        additionalProperties: false,
      },
    });
    // The server's schema as it is (references included), only `$schema` gone.
    expect(plain.tools.definitions.find((t) => t.name === 'open__createItem')).toEqual({
      name: 'open__createItem',
      description: 'Create an item',
      input_schema: served('createItem'),
    });

    const strict = await createAnthropicTools(w.toolgate(), { apps: ['open'], strict: true });
    if (!strict.ok) throw new Error(strict.error);
    // Optional stays optional; references are written out; length constraints are dropped.
    expect(strict.tools.definitions.find((t) => t.name === 'open__createItem')).toEqual({
      name: 'open__createItem',
      description: 'Create an item',
      input_schema: {
        type: 'object',
        properties: {
          body: {
            type: 'object',
            required: ['title'],
            properties: { title: { type: 'string' }, labels: { type: 'array', items: { type: 'string' } } },
            additionalProperties: false,
          },
        },
        required: ['body'],
        additionalProperties: false,
      },
      strict: true,
    });
    expect(strict.tools.strictness.get('open__listItems')).toEqual({
      strict: false,
      reason: 'the object at /properties/filter has no fixed properties',
    });
    expect(strict.tools.definitions.find((t) => t.name === 'open__listItems')).not.toHaveProperty('strict');
  });

  it('runs the tool_use blocks of ours and answers tool_result blocks in order', async () => {
    const loaded = await createAnthropicTools(w.toolgate(), { apps: ['open'] });
    if (!loaded.ok) throw new Error(loaded.error);
    const before = w.upstream.requests.length;
    const answer = message([
      { type: 'text', text: 'Let me look.', citations: null },
      toolUse('toolu_1', 'open__createItem', { body: { title: 'From Claude', labels: ['x'] } }),
      toolUse('toolu_2', 'web_search_of_my_own', { q: 'x' }),
      toolUse('toolu_3', 'open__getStatus', { code: 404 }),
    ]);

    const results = await loaded.tools.handleToolUses(answer);

    expect(results).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_1',
        content: JSON.stringify({ ok: true, data: { id: 'item-1', title: 'From Claude', labels: ['x'] } }),
      },
      {
        type: 'tool_result',
        tool_use_id: 'toolu_3',
        is_error: true,
        content: JSON.stringify({
          ok: false,
          error: 'upstream_error',
          upstream_status: 404,
          upstream_body: '{"error":"status 404","code":404}',
          message: 'open answered HTTP 404; its answer is in upstream_body.',
        }),
      },
    ]);
    const upstream = w.upstream.requests
      .slice(before)
      .map((r) => `${r.method} ${r.url} ${r.body}`)
      .sort();
    expect(upstream).toEqual(['GET /status/404 ', 'POST /items {"title":"From Claude","labels":["x"]}']);
  });

  it('auth_required round: is_error with the link, then the retry with the same key runs once', async () => {
    const { fetch, sent } = recordingFetch();
    const loaded = await createAnthropicTools(w.toolgate({ fetch }), {
      userId: 'an-ada',
      apps: ['demo'],
      authorization: { clientRedirectUri: w.receiver.url },
    });
    if (!loaded.ok) throw new Error(loaded.error);
    const meBefore = w.meCalls();

    const [first] = await loaded.tools.handleToolUses(message([toolUse('toolu_a', 'demo__getMe', {})]));
    expect(first).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_a', is_error: true });
    const output = JSON.parse(first?.content as string);
    expect(output).toEqual({
      ok: false,
      error: 'auth_required',
      app_id: 'demo',
      authorization_url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/auth\?/),
      expires_at: expect.any(String),
      message: `The user has not connected demo yet. Ask the user to open ${output.authorization_url} and allow access (the link works until ${output.expires_at}), then call demo__getMe again with the same arguments.`,
    });
    expect(await w.consent(output.authorization_url, { account: 'ada' })).toMatchObject({
      status: 'success',
    });

    const second = await loaded.tools.handleToolUses([toolUse('toolu_b', 'demo__getMe', {})]);
    expect(second).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_b',
        content: JSON.stringify({ ok: true, data: { id: 'user-1', name: 'Ada' } }),
      },
    ]);
    expect(w.meCalls() - meBefore).toBe(1);
    const calls = proxyCalls(sent);
    expect(calls.map((c) => c.key)).toEqual([calls[0]?.key, calls[0]?.key]);
  });

  it('without authorization options the model is told the user must connect the app', async () => {
    const loaded = await createAnthropicTools(w.toolgate(), { userId: 'an-nobody', apps: ['demo'] });
    if (!loaded.ok) throw new Error(loaded.error);
    const [result] = await loaded.tools.handleToolUses([toolUse('toolu_x', 'demo__getMe', {})]);
    expect(result).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_x',
      is_error: true,
      content: JSON.stringify({
        ok: false,
        error: 'auth_required',
        app_id: 'demo',
        message:
          'The user has not connected demo yet. Ask the user to connect demo in this application, then call demo__getMe again with the same arguments.',
      }),
    });
  });
});
