/**
 * A catalog larger than a model takes, in the frameworks: the real AI SDK (`generateText` with its
 * mock model) narrows each step's `activeTools` through `prepareStep`, and reaches every tool through
 * the search pair; real LangChain.js `StructuredTool`s do the same — against a real toolgate server
 * with an app of 300 tools.
 */
import { ToolMessage } from '@langchain/core/messages';
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AiStepSelection, createAiTools } from '../../../sdk/src/ai.ts';
import { createLangChainTools } from '../../../sdk/src/langchain.ts';
import { type LargeWorld, startLargeWorld } from './large-world.ts';

const PAIR = ['search_tools', 'call_tool'];

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

type Part =
  | { type: 'text'; text: string }
  | { type: 'tool-call'; toolCallId: string; toolName: string; input: string };

/** A model answering one scripted step after another. */
function scripted(steps: Part[][]) {
  return new MockLanguageModelV3({
    doGenerate: steps.map((content) => ({
      content,
      finishReason: content.some((part) => part.type === 'tool-call')
        ? { unified: 'tool-calls' as const, raw: 'tool_calls' }
        : { unified: 'stop' as const, raw: 'stop' },
      usage,
      warnings: [],
    })),
  });
}

const call = (toolCallId: string, toolName: string, input: unknown): Part => ({
  type: 'tool-call',
  toolCallId,
  toolName,
  input: JSON.stringify(input),
});

describe('SDK adapters: the frameworks on a catalog over the limit', () => {
  let w: LargeWorld;
  beforeAll(async () => {
    w = await startLargeWorld('pglite');
  });
  afterAll(async () => {
    await w?.close();
  });

  it("AI SDK: prepareStep narrows each step's activeTools to the tools its text asks for", async () => {
    const selections: AiStepSelection[] = [];
    const loaded = await createAiTools(w.toolgate(), {
      apps: ['big'],
      limit: 5,
      // The step's own words: the latest line (the model's text after the user's message, if any).
      select: (turn) => turn.text.split('\n').at(-1),
      onSelect: (selection) => selections.push(selection),
    });
    if (!loaded.ok) throw new Error(loaded.error);
    expect(loaded.strategy).toBe('search');
    expect(Object.keys(loaded.tools)).toEqual(PAIR);
    const model = scripted([
      [{ type: 'text', text: 'remove invoice' }, call('c1', 'big__zeppelins_archive', { id: 'z-5' })],
      [call('c2', 'big__invoices_remove', { id: 'i-1' })],
      [{ type: 'text', text: 'done' }],
    ]);
    const before = w.echo.requests.length;

    const result = await generateText({
      model,
      tools: loaded.tools,
      prepareStep: loaded.prepareStep,
      prompt: 'archive zeppelin',
      stopWhen: stepCountIs(5),
    });

    expect(result.text).toBe('done');
    const names = model.doGenerateCalls.map((options) => (options.tools ?? []).map((tool) => tool.name));
    expect(names).toHaveLength(3);
    // The AI SDK lists a step's tools in the record's order: the pair first, then those added.
    expect(names[0]).toContain('big__zeppelins_archive');
    expect(names[1]).toContain('big__invoices_remove');
    expect(names[1]).not.toContain('big__zeppelins_archive');
    for (const step of names) {
      expect(step.slice(0, 2)).toEqual(PAIR);
      expect(step.length).toBeLessThanOrEqual(5 + 2);
    }
    expect(selections.map((s) => [s.stepNumber, [...s.activeTools].sort(), s.failure])).toEqual(
      names.map((step, index) => [index, [...step].sort(), undefined]),
    );
    expect(selections[0]?.selected?.[0]?.toolId).toBe('big:::zeppelins_archive');
    expect(selections[1]?.selected?.[0]?.toolId).toBe('big:::invoices_remove');
    expect(w.echo.requests.slice(before).map((r) => `${r.method} ${r.url}`)).toEqual([
      'POST /zeppelins/z-5/archive',
      'DELETE /invoices/i-1',
    ]);
    expect(result.steps[0]?.toolResults[0]?.output).toEqual({ ok: true, data: { received: true } });
  });

  it("AI SDK: by default the user's words select; without prepareStep the model sees only the pair, which reaches any tool", async () => {
    const loaded = await createAiTools(w.toolgate(), { apps: ['big'] });
    if (!loaded.ok) throw new Error(loaded.error);
    const selected = scripted([[{ type: 'text', text: 'ok' }]]);
    await generateText({
      model: selected,
      tools: loaded.tools,
      prepareStep: loaded.prepareStep,
      prompt: 'archive zeppelin',
    });
    const first = (selected.doGenerateCalls[0]?.tools ?? []).map((tool) => tool.name);
    expect(first).toContain('big__zeppelins_archive');
    expect(first.length).toBeLessThanOrEqual(20 + 2);

    // A fresh set: the one above grew by the tool its step selected.
    const fresh = await createAiTools(w.toolgate(), { apps: ['big'] });
    if (!fresh.ok) throw new Error(fresh.error);
    const model = scripted([
      [call('s1', 'search_tools', { query: 'archive zeppelin' })],
      [call('s2', 'call_tool', { name: 'big__zeppelins_archive', arguments: { id: 'z-6' } })],
      [{ type: 'text', text: 'done' }],
    ]);
    const result = await generateText({
      model,
      tools: fresh.tools,
      prompt: 'archive zeppelin',
      stopWhen: stepCountIs(5),
    });
    expect(model.doGenerateCalls.map((options) => (options.tools ?? []).map((tool) => tool.name))).toEqual([
      PAIR,
      PAIR,
      PAIR,
    ]);
    const found = result.steps[0]?.toolResults[0]?.output as { data: { tools: Array<{ name: string }> } };
    expect(found.data.tools[0]?.name).toBe('big__zeppelins_archive');
    expect(result.steps[1]?.toolResults[0]?.output).toEqual({ ok: true, data: { received: true } });
    expect(w.echo.requests.at(-1)?.url).toBe('/zeppelins/z-6/archive');

    await expect(createAiTools(w.toolgate(), { apps: ['big'], strategy: 'all' })).rejects.toThrow(
      "the catalog holds more than 128 tools, more than the 128 tool definitions the model is given per request (options.maxTools): set options.strategy to 'search' (or 'auto'), or narrow the tools with options.query, options.apps or options.tools",
    );
  });

  it('AI SDK: the tools record keeps to maxTools however many steps select, dropping the oldest selections', async () => {
    const loaded = await createAiTools(w.toolgate(), { apps: ['big'], maxTools: 8, limit: 3 });
    if (!loaded.ok) throw new Error(loaded.error);
    const model = scripted([]);
    const step = async (text: string) => {
      const prepared = await loaded.prepareStep({
        steps: [],
        stepNumber: 0,
        model,
        messages: [{ role: 'user', content: text }],
        experimental_context: undefined,
      });
      const active = prepared?.activeTools ?? [];
      const keys = Object.keys(loaded.tools);
      expect(keys.length).toBeLessThanOrEqual(8);
      for (const name of active) expect(keys).toContain(name);
      return active;
    };
    const zeppelins = await step('zeppelin');
    expect(zeppelins).toHaveLength(3 + 2);
    await step('invoice');
    const kayaks = await step('kayak');
    expect(kayaks.filter((name) => name.startsWith('big__kayaks_'))).toHaveLength(3);
    // The zeppelins were selected longest ago: gone from the record.
    expect(Object.keys(loaded.tools).filter((name) => name.startsWith('big__zeppelins_'))).toEqual([]);
    expect(Object.keys(loaded.tools).slice(0, 2)).toEqual(PAIR);
  });

  it('LangChain: the search pair as StructuredTools, per-turn tools, maxTools as the model’s limit', async () => {
    const loaded = await createLangChainTools(w.toolgate(), { apps: ['big'] });
    if (!loaded.ok) throw new Error(loaded.error);
    expect(loaded.strategy).toBe('search');
    expect(loaded.tools.map((t) => t.name)).toEqual(PAIR);
    const [searchTools, callTool] = loaded.tools;
    const found = (await searchTools?.invoke({
      id: 'l1',
      name: 'search_tools',
      args: { query: 'archive zeppelin', limit: 2 },
      type: 'tool_call',
    })) as ToolMessage;
    expect(found).toBeInstanceOf(ToolMessage);
    expect(JSON.parse(found.content as string).data.tools[0].name).toBe('big__zeppelins_archive');
    const ran = (await callTool?.invoke({
      id: 'l2',
      name: 'call_tool',
      args: { name: 'big__zeppelins_archive', arguments: { id: 'z-8' } },
      type: 'tool_call',
    })) as ToolMessage;
    expect(ran.content).toBe(JSON.stringify({ ok: true, data: { received: true } }));
    expect(ran.artifact).toMatchObject({
      name: 'call_tool',
      toolId: 'big:::zeppelins_archive',
      isError: false,
    });

    const turn = await loaded.forTurn('archive zeppelin');
    if (!turn.ok) throw new Error(turn.error);
    expect(turn.tools[0]?.name).toBe('big__zeppelins_archive');
    expect(turn.tools.slice(-2)).toEqual(loaded.tools); // the same pair, not new copies

    const small = await createLangChainTools(w.toolgate(), { apps: ['open'], maxTools: 3 });
    expect(small.ok && [small.strategy, small.tools.map((t) => t.name)]).toEqual(['search', PAIR]);
    await expect(
      createLangChainTools(w.toolgate(), { apps: ['open'], maxTools: 3, strategy: 'all' }),
    ).rejects.toThrow(
      /^the catalog holds more than 3 tools, more than the 3 tool definitions the model is given per request/,
    );
  });
});
