/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, the spec's own runner)
 * against /mcp: the four scenarios that apply to a gateway whose tools are its apps' operations —
 * `server-initialize`, `ping`, `tools-list` and `dns-rebinding-protection` (the others ask for
 * fixed test tools, prompts or resources a gateway does not have). The runner needs Node ≥ 22
 * (test/support/node22.ts); without one the test is skipped and says why.
 *
 * The runner sends no headers of our choosing, and /mcp wants the agent's key and client id on
 * every request (§9): a forwarder on loopback adds them, as a configured MCP client would, and
 * passes everything else — Host and Origin included — as the runner sent it.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentHeaders } from '../support/agent.ts';
import { type Node22, node22 } from '../support/node22.ts';
import { startWorld, type World } from '../support/world.ts';

const run = promisify(execFile);
const RUNNER = join(process.cwd(), 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

/** Each scenario and the checks it makes, every one of which must pass. */
const SCENARIOS: Record<string, string[]> = {
  'server-initialize': ['server-initialize'],
  ping: ['ping'],
  'tools-list': ['tools-list'],
  'dns-rebinding-protection': ['localhost-host-rebinding-rejected', 'localhost-host-valid-accepted'],
};

/** A loopback HTTP forwarder to `target` that adds `headers` to every request and changes nothing else. */
async function credentialForwarder(target: string, headers: Record<string, string>) {
  const to = new URL(target);
  const server: Server = createServer((req, res) => {
    const forwarded = request(
      {
        host: to.hostname,
        port: to.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, ...headers },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on('error', () => res.destroy());
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('MCP conformance suite', () => {
  let node: Node22;
  let world: World<'agent'>;
  let forwarder: Awaited<ReturnType<typeof credentialForwarder>>;
  let results: string;

  beforeAll(async () => {
    [node, world] = await Promise.all([
      node22(),
      startWorld('pglite', {
        apps: { plain: { provider: 'acme.plain' } },
        agents: { agent: ['tools:execute'] },
      }),
    ]);
    forwarder = await credentialForwarder(world.server.url, agentHeaders(world.agents.agent));
    results = await mkdtemp(join(tmpdir(), 'toolgate-conformance-'));
  }, 360_000);

  afterAll(async () => {
    await Promise.all([world?.close(), forwarder?.close()]);
    if (results) await rm(results, { recursive: true, force: true });
  });

  for (const [scenario, checks] of Object.entries(SCENARIOS)) {
    it(`passes ${scenario}`, { timeout: 120_000 }, async (context) => {
      if (!node.ok) return context.skip(node.reason);
      const output = join(results, scenario);
      const outcome = await run(
        node.path,
        [RUNNER, 'server', '--url', `${forwarder.url}/mcp`, '--scenario', scenario, '-o', output],
        { timeout: 100_000 },
      ).then(
        (done) => ({ code: 0, text: done.stdout + done.stderr }),
        (error: { code?: number; stdout?: string; stderr?: string }) => ({
          code: error.code ?? -1,
          text: `${error.stdout ?? ''}${error.stderr ?? ''}`,
        }),
      );
      const recorded = await readChecks(output);
      expect({ outcome: outcome.code, checks: recorded }, outcome.text).toEqual({
        outcome: 0,
        checks: checks.map((id) => ({ id, status: 'SUCCESS' })),
      });
    });
  }
});

/** Every check of a scenario's run as the runner recorded it (checks.json under its output folder). */
async function readChecks(
  folder: string,
): Promise<Array<{ id: string; status: string; errorMessage?: string }>> {
  const files = await readdir(folder, { recursive: true }).catch(() => [] as string[]);
  const found = files.filter((name) => name.endsWith('checks.json'));
  const checks = [];
  for (const name of found) {
    const list = JSON.parse(await readFile(join(folder, name), 'utf8')) as Array<{
      id: string;
      status: string;
      errorMessage?: string;
    }>;
    for (const { id, status, errorMessage } of list)
      checks.push(errorMessage ? { id, status, errorMessage } : { id, status });
  }
  return checks;
}
