/**
 * The README's "MCP clients on a laptop, with a static API key": every configuration, taken from
 * the README itself, filled with a real agent's key and client id and this server's URL, and run —
 * the client itself where it runs here (mcp-remote as Claude Desktop starts it, the Inspector CLI),
 * else the URL and headers the client would send, through the official MCP SDK (Claude Code,
 * Cursor, VS Code cannot run here). Each must list the example app's tools and run one.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Agent, provisionAgent, registerApp } from '../support/agent.ts';
import { type PetsExample, petsRegistration, startPetsExample } from '../support/pets-example.ts';
import { startServer, type TestServer } from '../support/server.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MODULES = path.join(ROOT, 'node_modules');
const MCP_REMOTE = path.join(MODULES, 'mcp-remote', 'dist', 'proxy.js');
/** The Inspector's CLI as `npx @modelcontextprotocol/inspector@0.15.0 --cli` runs it. */
const INSPECTOR = path.join(MODULES, '@modelcontextprotocol', 'inspector-cli', 'build', 'cli.js');
const SECTION = '### MCP clients on a laptop, with a static API key';

/** The fenced blocks of the section, in order. */
function sectionBlocks(): { lang: string; text: string }[] {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf(SECTION);
  const end = readme.indexOf('\n## ', start);
  const section = readme.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/^```(json|sh)\n([\s\S]*?)\n```$/gm)].map((m) => ({
    lang: m[1] as string,
    text: m[2] as string,
  }));
}

/** A command line's words, as a POSIX shell splits these ones (double quotes, `\` line breaks). */
function words(command: string): string[] {
  return [...command.replace(/\\\n/g, ' ').matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? (m[2] as string));
}

/** `npx -y mcp-remote@…` as this checkout has it installed. */
function localMcpRemote(argv: string[]): string[] {
  const at = argv.findIndex((word) => word.startsWith('mcp-remote@'));
  expect(argv.slice(at - 2, at)).toEqual(['npx', '-y']);
  return [...argv.slice(0, at - 2), process.execPath, MCP_REMOTE, ...argv.slice(at + 1)];
}

async function expectTools(client: Client): Promise<void> {
  const { tools } = await client.listTools();
  expect(tools.map((tool) => tool.name)).toEqual(['pets__listPets', 'pets__addPet', 'pets__getPetById']);
  const result = await client.callTool({ name: 'pets__getPetById', arguments: { petId: 1 } });
  expect(result.structuredContent).toMatchObject({ ok: true, data: { id: 1, name: 'Rex', tag: 'dog' } });
}

/** What a Streamable HTTP client with this URL and these headers gets. */
async function expectHttp(url: string, headers: Record<string, string>): Promise<void> {
  const client = new Client({ name: 'toolgate-config-check', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  try {
    await expectTools(client);
  } finally {
    await client.close();
  }
}

describe('README: MCP client configurations with a static API key', { timeout: 120_000 }, () => {
  let server: TestServer;
  let pets: PetsExample;
  let agent: Agent;
  let home: string;
  let blocks: { lang: string; text: string }[];
  /** A block with this server, key and client id in place of the README's placeholders. */
  const filled = (index: number) =>
    (blocks[index]?.text ?? '')
      .replaceAll('http://127.0.0.1:3000', server.url)
      .replaceAll('tg_key_…', agent.apiKey)
      .replaceAll('cli_…', agent.clientId);

  beforeAll(async () => {
    blocks = sectionBlocks();
    [server, pets] = await Promise.all([startServer('pglite'), startPetsExample()]);
    await registerApp(server, 'pets', petsRegistration(pets));
    agent = await provisionAgent(server, ['tools:execute']);
    // mcp-remote keeps its OAuth state under the home folder: a scratch one.
    home = mkdtempSync(path.join(os.tmpdir(), 'toolgate-mcp-configs-'));
  });
  afterAll(async () => {
    await server?.close();
    await pets?.close();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('holds five configurations: Claude Desktop, Claude Code, Cursor, VS Code, the Inspector', () => {
    expect(blocks.map((b) => b.lang)).toEqual(['json', 'sh', 'json', 'json', 'sh']);
  });

  it('Claude Desktop: the mcp-remote bridge it starts, with its env', async () => {
    const config = JSON.parse(filled(0)).mcpServers.toolgate;
    const [command, ...args] = localMcpRemote([config.command, ...config.args]);
    const client = new Client({ name: 'claude-desktop-stand-in', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: command as string,
        args,
        env: { ...(process.env as Record<string, string>), ...config.env, MCP_REMOTE_CONFIG_DIR: home },
        stderr: 'ignore',
      }),
    );
    try {
      await expectTools(client);
    } finally {
      await client.close();
    }
  });

  it('Claude Code: the URL and headers of `claude mcp add --transport http`', async () => {
    const argv = words(filled(1));
    expect(argv.slice(0, 5)).toEqual(['claude', 'mcp', 'add', '--transport', 'http']);
    const headers: Record<string, string> = {};
    argv.forEach((word, i) => {
      if (word !== '--header') return;
      const [name, ...value] = (argv[i + 1] as string).split(':');
      headers[name as string] = value.join(':').trim();
    });
    expect(Object.keys(headers)).toEqual(['Authorization', 'X-Service-Client-Id', 'X-Service-User-Id']);
    await expectHttp(argv[6] as string, headers);
  });

  it('Cursor: its url and headers', async () => {
    const { url, headers } = JSON.parse(filled(2)).mcpServers.toolgate;
    await expectHttp(url, headers);
  });

  it('VS Code: an http server whose key comes from a password input', async () => {
    const config = JSON.parse(filled(3));
    const input = config.inputs[0];
    expect(input).toMatchObject({ type: 'promptString', password: true });
    const server = config.servers.toolgate;
    expect(server.type).toBe('http');
    const headers = Object.fromEntries(
      Object.entries<string>(server.headers).map(([name, value]) => [
        name,
        value.replace(`\${input:${input.id}}`, agent.apiKey),
      ]),
    );
    await expectHttp(server.url, headers);
  });

  it('the Inspector CLI (0.15.0, the last for Node 20) through mcp-remote', async () => {
    const argv = words(filled(4));
    expect(argv.slice(0, 4)).toEqual(['npx', '-y', '@modelcontextprotocol/inspector@0.15.0', '--cli']);
    const { stdout } = await run(process.execPath, [INSPECTOR, ...localMcpRemote(argv).slice(3)], {
      env: { ...process.env, HOME: home, MCP_REMOTE_CONFIG_DIR: home },
    });
    expect(JSON.parse(stdout).tools.map((tool: { name: string }) => tool.name)).toContain('pets__getPetById');
  });
});
