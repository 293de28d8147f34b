/**
 * One naming for models everywhere (docs/reference.md "MCP"): `<appId>__<toolName>`, at most 64 characters,
 * hashed when longer, mapped back to the composite id — checked on long, dotted and colliding ids
 * registered on a real server, and run through an adapter to the upstream.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadToolset } from '../../../sdk/src/adapters/load.ts';
import { createOpenAITools } from '../../../sdk/src/openai.ts';
import { modelToolName } from '../../../shared/tool-names.ts';
import { registerApp } from '../../support/agent.ts';
import { startWorld, type World } from '../world.ts';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const LONG = 'a-rather-long-application-identifier-for-the-name-round-trip-test';

describe('SDK adapters: tool names for models', () => {
  let w: World;
  beforeAll(async () => {
    w = await startWorld('pglite');
    const put = (appId: string, openapi: unknown) =>
      registerApp(w.server, appId, { provider: 'toolgate.test', openapi, auth: { type: 'none' } });
    await put(LONG, w.upstream.openapi);
    await put('acme.files', w.upstream.openapi);
    // `x__y` + `getItem` and `x` + `y__getItem` give the same plain name.
    await put('x__y', w.upstream.openapi);
    await put('x', {
      openapi: '3.1.0',
      info: { title: 'collides', version: '1' },
      servers: [{ url: w.upstream.url }],
      paths: {
        '/items/{itemId}': {
          get: {
            operationId: 'y__getItem',
            parameters: [{ name: 'itemId', in: 'path', required: true, schema: { type: 'string' } }],
            responses: { 200: { description: 'The item' } },
          },
        },
      },
    });
  });
  afterAll(async () => {
    await w?.close();
  });

  it('long ids: 64-character hashed names, the MCP names, unique, mapped back, and callable', async () => {
    const loaded = await createOpenAITools(w.toolgate(), { apps: [LONG] });
    if (!loaded.ok) throw new Error(loaded.error);
    const { toolset } = loaded.tools;
    expect(toolset.tools.length).toBeGreaterThan(10);
    const names = toolset.tools.map((t) => t.name);
    expect(new Set(names).size).toBe(names.length);
    for (const tool of toolset.tools) {
      const toolName = tool.toolId.slice(`${LONG}:::`.length);
      const plain = `${LONG}__${toolName}`;
      expect(tool.name).toBe(`${plain.slice(0, 55)}_${sha256(`${LONG}:::${toolName}`).slice(0, 8)}`);
      expect(tool.name).toHaveLength(64);
      expect(tool.name).toBe(modelToolName(LONG, toolName, sha256)); // what MCP's tools/list shows
      expect(toolset.toolId(tool.name)).toBe(tool.toolId);
    }
    const getItem = toolset.tools.find((t) => t.toolId === `${LONG}:::getItem`);
    const before = w.upstream.requests.length;
    const [message] = await loaded.tools.handleToolCalls({
      role: 'assistant',
      content: null,
      refusal: null,
      tool_calls: [
        {
          id: 'call_long',
          type: 'function',
          function: { name: getItem?.name as string, arguments: '{"itemId":"long","fields":null}' },
        },
      ],
    });
    expect(message).toEqual({
      role: 'tool',
      tool_call_id: 'call_long',
      content: JSON.stringify({ ok: true, data: { id: 'long', title: 'An item' } }),
    });
    expect(w.upstream.requests.slice(before).map((r) => r.url)).toEqual(['/items/long']);
  });

  it('an app id with "." (not allowed in function names) gets `_` and the hash', async () => {
    const loaded = await createOpenAITools(w.toolgate(), { tools: ['acme.files:::getItem'] });
    if (!loaded.ok) throw new Error(loaded.error);
    const [tool] = loaded.tools.toolset.tools;
    expect(tool?.name).toBe(`acme_files__getItem_${sha256('acme.files:::getItem').slice(0, 8)}`);
    expect(tool?.name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(loaded.tools.toolset.toolId(tool?.name as string)).toBe('acme.files:::getItem');
  });

  it('two ids with one plain name both take the hashed form and stay apart', async () => {
    const loaded = await createOpenAITools(w.toolgate(), { tools: ['x__y:::getItem', 'x:::y__getItem'] });
    if (!loaded.ok) throw new Error(loaded.error);
    const byId = Object.fromEntries(loaded.tools.toolset.tools.map((t) => [t.toolId, t.name]));
    expect(byId).toEqual({
      'x__y:::getItem': `x__y__getItem_${sha256('x__y:::getItem').slice(0, 8)}`,
      'x:::y__getItem': `x__y__getItem_${sha256('x:::y__getItem').slice(0, 8)}`,
    });
    for (const [toolId, name] of Object.entries(byId)) expect(loaded.tools.toolset.toolId(name)).toBe(toolId);
  });

  it('a tool found later keeps apart from one named before: it takes the hashed form, the first keeps its name', async () => {
    const loaded = await loadToolset(w.toolgate(), { apps: ['x__y', 'x'], strategy: 'search' });
    if (!loaded.ok) throw new Error(loaded.error);
    const { toolset } = loaded;
    const first = await toolset.search('item', { apps: ['x__y'] });
    expect(first.ok && first.tools.find((t) => t.toolId === 'x__y:::getItem')?.name).toBe('x__y__getItem');
    const later = await toolset.search('y__getItem', { apps: ['x'] });
    const hashed = `x__y__getItem_${sha256('x:::y__getItem').slice(0, 8)}`;
    expect(later.ok && later.tools.map((t) => [t.toolId, t.name])).toEqual([['x:::y__getItem', hashed]]);
    expect(toolset.toolId('x__y__getItem')).toBe('x__y:::getItem');
    expect(toolset.toolId(hashed)).toBe('x:::y__getItem');
    const again = await toolset.search('item', { apps: ['x__y'] });
    expect(again.ok && again.tools.find((t) => t.toolId === 'x__y:::getItem')?.name).toBe('x__y__getItem');

    const before = w.upstream.requests.length;
    const ran = await toolset.call('call_tool', { name: hashed, arguments: { itemId: 'found-later' } });
    expect(ran).toMatchObject({ toolId: 'x:::y__getItem', output: { ok: true } });
    expect(w.upstream.requests.slice(before).map((r) => r.url)).toEqual(['/items/found-later']);
  });
});
