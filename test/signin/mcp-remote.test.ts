/**
 * `npx mcp-remote <url>` — what Claude Desktop runs for a remote server — signs in against a local
 * toolgate with nothing but the URL (docs/reference.md "MCP sign-in", README "MCP clients that
 * sign in"): it registers itself, prints the authorization URL (it would open a browser), the person
 * signs in and approves, the browser lands on mcp-remote's loopback callback, and the tools list.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/ports.ts';
import { type SigninWorld, startSigninWorld } from '../support/signin.ts';

const MCP_REMOTE = path.join(process.cwd(), 'node_modules', 'mcp-remote', 'dist', 'proxy.js');

describe('mcp-remote signs in by URL alone', { timeout: 120_000 }, () => {
  let world: SigninWorld;
  let home: string;
  beforeAll(async () => {
    world = await startSigninWorld('pglite');
    home = mkdtempSync(path.join(tmpdir(), 'toolgate-mcp-remote-'));
  }, 120_000);
  afterAll(async () => {
    await world?.close();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('completes the flow and lists the tools', async () => {
    const callbackPort = await freePort();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MCP_REMOTE, `${world.url}/mcp`, String(callbackPort), '--transport', 'http-only'],
      // BROWSER: a command that opens nothing; this test is the browser.
      env: { ...(process.env as Record<string, string>), MCP_REMOTE_CONFIG_DIR: home, BROWSER: 'true' },
      stderr: 'pipe',
    });
    let printed = '';
    let listening: (port: string) => void = () => {};
    // mcp-remote prints the authorization URL first and starts its callback server after: a
    // browser as quick as this test's would land before it listens (CI once met ECONNREFUSED).
    const callbackListening = new Promise<string>((resolve) => {
      listening = resolve;
    });
    const authorizationUrl = new Promise<string>((resolve) => {
      transport.stderr?.on('data', (chunk: Buffer) => {
        printed += chunk.toString();
        const found = /Please authorize this client by visiting:\s+(\S+)/.exec(printed);
        if (found) resolve(found[1] as string);
        const server = /OAuth callback server running at http:\/\/127\.0\.0\.1:(\d+)/.exec(printed);
        if (server) listening(server[1] as string);
      });
    });
    const client = new Client({ name: 'claude-desktop-stand-in', version: '1.0.0' });
    const connected = client.connect(transport);

    const url = new URL(await authorizationUrl);
    expect(url.origin + url.pathname).toBe(`${world.url}/oauth2/authorize`);
    const back = await world.browser('ada').authorize(url);
    expect(back.origin).toBe(`http://localhost:${callbackPort}`);
    expect(await callbackListening).toBe(String(callbackPort));
    const landed = await fetch(back);
    expect(landed.status).toBe(200);

    await connected;
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain('demo__getMe');
    } finally {
      await client.close();
    }
  });
});
