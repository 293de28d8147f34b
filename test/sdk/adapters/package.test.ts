/**
 * The framework entries of the published package: build the SDK into a staging directory (not
 * sdk/dist, which test/sdk/package.test.ts rebuilds at the same time), `npm pack` it, install the
 * tarball into a fresh project and import every subpath with plain `node` — first without any
 * framework installed (a clear MissingPeerError where a framework runs; types-only adapters work),
 * then with the frameworks, running a tool end to end through each; and type-check a consumer of
 * all four subpaths.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Agent, provisionAgent, registerApp } from '../../support/agent.ts';
import { startServer, type TestServer } from '../../support/server.ts';
import { startUpstream, type Upstream } from '../../support/upstream.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/** The environment without npm's own `npm_*` variables (set when the tests run under `npm test`). */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!/^npm_/i.test(key)) env[key] = value;
  return { ...env, ...extra };
}

async function npm(args: string[], cwd: string): Promise<string> {
  const { stdout } = await run('npm', args, { cwd, env: cleanEnv(), maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

/** From npm's cache alone; what it lacks, from the registry, preferring the cache. */
async function install(packages: string[], cwd: string): Promise<void> {
  const flags = ['--no-audit', '--no-fund'];
  try {
    await npm(['install', ...packages, '--offline', ...flags], cwd);
  } catch (error) {
    if (!/ENOTCACHED/.test(String((error as { stderr?: string }).stderr ?? error))) throw error;
    await npm(['install', ...packages, '--prefer-offline', ...flags], cwd);
  }
}

/** The framework versions the repository tests with. */
async function versionOf(name: string): Promise<string> {
  const manifest = JSON.parse(await readFile(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8'));
  return `${name}@${manifest.version}`;
}

const WITHOUT_PEERS_JS = `
import { Toolgate } from '@toolgate/sdk';
const { BASE, KEY, CLIENT } = process.env;
const toolgate = new Toolgate({ baseUrl: BASE, apiKey: KEY, clientId: CLIENT });
const describe = (error) => ({ name: error.name, code: error.code, peer: error.peer, message: error.message });
const out = { exports: {} };
for (const entry of ['ai', 'openai', 'anthropic', 'langchain']) {
  out.exports[entry] = Object.keys(await import('@toolgate/sdk/' + entry)).sort();
}
const { createAiTools } = await import('@toolgate/sdk/ai');
out.ai = await createAiTools(toolgate, { apps: ['open'] }).then(() => 'loaded', describe);
const { createLangChainTools } = await import('@toolgate/sdk/langchain');
out.langchain = await createLangChainTools(toolgate, { apps: ['open'] }).then(() => 'loaded', describe);
// Types-only adapters run without their SDKs.
const { createOpenAITools } = await import('@toolgate/sdk/openai');
const openai = await createOpenAITools(toolgate, { tools: ['open:::getItem'] });
out.openai = await openai.tools.handleToolCalls({ role: 'assistant', content: null, refusal: null,
  tool_calls: [{ id: 'c1', type: 'function', function: { name: 'open__getItem', arguments: '{"itemId":"pk-1","fields":null}' } }] });
const { createAnthropicTools } = await import('@toolgate/sdk/anthropic');
const anthropic = await createAnthropicTools(toolgate, { tools: ['open:::getItem'] });
out.anthropic = await anthropic.tools.handleToolUses([{ type: 'tool_use', id: 't1', name: 'open__getItem', input: { itemId: 'pk-2' } }]);
console.log(JSON.stringify(out));
`;

const WITH_PEERS_JS = `
import { Toolgate } from '@toolgate/sdk';
import { createAiTools } from '@toolgate/sdk/ai';
import { createLangChainTools } from '@toolgate/sdk/langchain';
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
const { BASE, KEY, CLIENT } = process.env;
const toolgate = new Toolgate({ baseUrl: BASE, apiKey: KEY, clientId: CLIENT });
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: 1, reasoning: undefined } };
const model = new MockLanguageModelV3({ doGenerate: [
  { content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'open__getItem', input: '{"itemId":"pk-ai"}' }], finishReason: { unified: 'tool-calls', raw: undefined }, usage, warnings: [] },
  { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] },
] });
const ai = await createAiTools(toolgate, { apps: ['open'] });
const result = await generateText({ model, tools: ai.tools, prompt: 'go', stopWhen: stepCountIs(3) });
const lc = await createLangChainTools(toolgate, { tools: ['open:::getItem'] });
const message = await lc.tools[0].invoke({ id: 'c2', name: 'open__getItem', args: { itemId: 'pk-lc' }, type: 'tool_call' });
console.log(JSON.stringify({ ai: result.steps[0].toolResults[0].output, text: result.text, langchain: message.content }));
`;

const CONSUMER_TS = `
import { Toolgate } from '@toolgate/sdk';
import { createAiTools, type ModelToolOutput } from '@toolgate/sdk/ai';
import { createAnthropicTools } from '@toolgate/sdk/anthropic';
import { createLangChainTools } from '@toolgate/sdk/langchain';
import { createOpenAITools } from '@toolgate/sdk/openai';
import type { PrepareStepFunction, ToolSet } from 'ai';
import type { ChatCompletionFunctionTool, ChatCompletionToolMessageParam } from 'openai/resources/chat/completions';
import type { ToolResultBlockParam, ToolUnion } from '@anthropic-ai/sdk/resources/messages/messages';
import type { StructuredTool } from '@langchain/core/tools';

const toolgate = new Toolgate({ baseUrl: 'http://127.0.0.1:3000', apiKey: 'k', clientId: 'c' });
const options = { userId: 'u', authorization: { clientRedirectUri: 'https://agent.example/done' } };
const ai = await createAiTools(toolgate, { ...options, apps: ['github'], select: (turn) => turn.text });
if (ai.ok) { const tools: ToolSet = ai.tools; const step: PrepareStepFunction<ToolSet> = ai.prepareStep; console.log(tools, step); }
const found = await toolgate.searchTools('open an issue', { apps: ['github'], limit: 5 });
if (found.ok) { const score: number | undefined = found.tools[0]?.score; console.log(score); }
const openai = await createOpenAITools(toolgate, { ...options, strict: true, strategy: 'search' });
if (openai.ok) {
  const defs: ChatCompletionFunctionTool[] = openai.tools.chatCompletions;
  const turn = await openai.tools.forTurn([{ role: 'user', content: 'open an issue' }]);
  if (turn.ok) console.log(turn.chatCompletions, turn.responses);
  const replies: ChatCompletionToolMessageParam[] = await openai.tools.handleToolCalls({ role: 'assistant', content: null, refusal: null });
  console.log(defs, replies);
}
const anthropic = await createAnthropicTools(toolgate, { ...options, strategy: 'defer', toolSearch: 'regex' });
if (anthropic.ok) {
  const defs: ToolUnion[] = anthropic.tools.definitions;
  const results: ToolResultBlockParam[] = await anthropic.tools.handleToolUses([]);
  console.log(defs, results);
}
const langchain = await createLangChainTools(toolgate, { ...options, maxTools: 64 });
if (langchain.ok) {
  const tools: StructuredTool[] = langchain.tools;
  const turn = await langchain.forTurn('open an issue');
  if (turn.ok) { const turnTools: StructuredTool[] = turn.tools; console.log(turnTools); }
  console.log(tools);
}
if (ai.ok && openai.ok && anthropic.ok && langchain.ok) {
  // Each would be allowed if a framework's types had not resolved (any): they must be errors.
  // @ts-expect-error: a ToolSet of tools, not strings
  const a: Record<string, string> = ai.tools;
  // @ts-expect-error: function tools, not strings
  const b: string[] = openai.tools.responses;
  // @ts-expect-error: Anthropic tools, not strings
  const c: string[] = anthropic.tools.definitions;
  // @ts-expect-error: StructuredTools, not strings
  const d: string[] = langchain.tools;
  console.log(a, b, c, d);
}
const output: ModelToolOutput = { ok: true, data: 1 };
// @ts-expect-error: strict is a boolean
await createOpenAITools(toolgate, { strict: 'yes' });
// @ts-expect-error: 'defer' is Anthropic's alone
await createOpenAITools(toolgate, { strategy: 'defer' });
console.log(output);
`;

// Not per database backend: the package is the subject, the server only its counterpart.
describe('SDK adapters: the packed subpaths in a fresh project', () => {
  let server: TestServer;
  let upstream: Upstream;
  let agent: Agent;
  let work: string;
  beforeAll(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'toolgate-sdk-adapters-'));
    upstream = await startUpstream();
    server = await startServer('pglite');
    await registerApp(server, 'open', {
      provider: 'toolgate.test',
      openapi: upstream.openapi,
      auth: { type: 'none' },
    });
    agent = await provisionAgent(server, ['tools:execute']);
  });
  afterAll(async () => {
    await server?.close();
    await upstream?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('every subpath imports without its framework (a clear error where one runs) and works with it', {
    timeout: 300_000,
  }, async () => {
    const staging = path.join(work, 'package');
    await run(process.execPath, [
      TSC,
      '-p',
      path.join(ROOT, 'sdk/tsconfig.build.json'),
      '--outDir',
      path.join(staging, 'dist'),
    ]);
    await cp(path.join(ROOT, 'sdk/package.json'), path.join(staging, 'package.json'));
    await cp(path.join(ROOT, 'sdk/README.md'), path.join(staging, 'README.md'));
    const packed = await npm(['pack', '--silent', '--ignore-scripts', '--pack-destination', work], staging);
    const tarball = path.join(work, packed.trim().split('\n').at(-1) ?? '');
    const { stdout: listing } = await run('tar', ['-tzf', tarball]);
    for (const entry of ['ai', 'openai', 'anthropic', 'langchain']) {
      expect(listing).toContain(`package/dist/sdk/src/${entry}.js`);
      expect(listing).toContain(`package/dist/sdk/src/${entry}.d.ts`);
    }

    const project = path.join(work, 'consumer');
    await mkdir(project);
    await writeFile(
      path.join(project, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
    );
    await install([tarball], project);
    const installed = (await readdir(path.join(project, 'node_modules'))).filter((n) => !n.startsWith('.'));
    expect(installed.sort()).toEqual(['@toolgate', 'ky', 'zod']); // optional peers stay out
    const env = cleanEnv({ BASE: server.url, KEY: agent.apiKey, CLIENT: agent.clientId });

    await writeFile(path.join(project, 'without.mjs'), WITHOUT_PEERS_JS);
    const bare = JSON.parse((await run(process.execPath, ['without.mjs'], { cwd: project, env })).stdout);
    expect(bare.exports).toEqual({
      ai: ['MissingPeerError', 'createAiTools'],
      openai: ['OpenAITools', 'createOpenAITools'],
      anthropic: ['AnthropicTools', 'createAnthropicTools'],
      langchain: ['MissingPeerError', 'createLangChainTools'],
    });
    expect(bare.ai).toEqual({
      name: 'MissingPeerError',
      code: 'ERR_TOOLGATE_MISSING_PEER',
      peer: 'ai',
      message:
        '@toolgate/sdk/ai needs the package "ai" (>=5.0.0), an optional peer dependency of @toolgate/sdk that is not installed: npm install ai',
    });
    expect(bare.langchain).toEqual({
      name: 'MissingPeerError',
      code: 'ERR_TOOLGATE_MISSING_PEER',
      peer: '@langchain/core',
      message:
        '@toolgate/sdk/langchain needs the package "@langchain/core" (^1.0.0), an optional peer dependency of @toolgate/sdk that is not installed: npm install @langchain/core',
    });
    expect(bare.openai).toEqual([
      {
        role: 'tool',
        tool_call_id: 'c1',
        content: JSON.stringify({ ok: true, data: { id: 'pk-1', title: 'An item' } }),
      },
    ]);
    expect(bare.anthropic).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 't1',
        content: JSON.stringify({ ok: true, data: { id: 'pk-2', title: 'An item' } }),
      },
    ]);

    const peers = await Promise.all(['ai', '@langchain/core', 'openai', '@anthropic-ai/sdk'].map(versionOf));
    await install([...peers, 'typescript@5.9.3'], project);
    await writeFile(path.join(project, 'with.mjs'), WITH_PEERS_JS);
    const full = JSON.parse((await run(process.execPath, ['with.mjs'], { cwd: project, env })).stdout);
    expect(full).toEqual({
      ai: { ok: true, data: { id: 'pk-ai', title: 'An item' } },
      text: 'done',
      langchain: JSON.stringify({ ok: true, data: { id: 'pk-lc', title: 'An item' } }),
    });

    await writeFile(path.join(project, 'consumer.ts'), CONSUMER_TS);
    await writeFile(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2023', 'ESNext.Disposable', 'DOM'],
          types: [],
          strict: true,
          noEmit: true,
          skipLibCheck: true,
        },
        files: ['consumer.ts'],
      }),
    );
    const checked = await run(process.execPath, [TSC, '-p', '.'], { cwd: project }).then(
      () => 'clean',
      (error: { stdout?: string }) => error.stdout ?? String(error),
    );
    expect(checked).toBe('clean');
  });
});
