/**
 * A server reads every app's search segment when it starts listening, not at its first search:
 * on a server holding thousands of apps the first search would otherwise wait for all of them.
 * `toolgate_search_tools` shows how many tools a process holds ready.
 */
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { provisionAgent, registerApp } from '../support/agent.ts';
import { describeBackends } from '../support/db.ts';
import { call, startServer, type TestServer } from '../support/server.ts';

const PETS_OPENAPI = JSON.parse(
  readFileSync(new URL('../../examples/pets.openapi.json', import.meta.url), 'utf8'),
) as Record<string, unknown>;

async function searchTools(server: TestServer): Promise<number> {
  const reply = await call(server.url, 'GET', '/metrics', { key: server.adminKey });
  expect(reply.status).toBe(200);
  const line = /^toolgate_search_tools (\d+)$/m.exec(reply.text);
  if (!line) throw new Error('no toolgate_search_tools line in /metrics');
  return Number(line[1]);
}

describeBackends('search segments read at start', (backend) => {
  const opened: TestServer[] = [];
  afterAll(async () => {
    for (const server of opened.reverse()) await server.close();
  });

  it('a restarted server holds every app’s tools before anyone searches', async () => {
    const first = await startServer(backend.name);
    opened.push(first);
    await registerApp(first, 'pets', {
      provider: 'example.pets',
      baseUrl: 'http://127.0.0.1:9',
      openapi: PETS_OPENAPI,
      auth: { type: 'none' },
    });
    // The same database, a new process: nothing of it in memory until it reads the segments.
    await first.app.close();
    const restarted = await startServer(backend.name, { databaseUrl: first.databaseUrl });
    opened.push(restarted);
    await vi.waitFor(async () => expect(await searchTools(restarted)).toBe(3), {
      timeout: 15_000,
      interval: 50,
    });

    const agent = await provisionAgent(restarted, ['tools:execute']);
    const found = await call(restarted.url, 'GET', '/tools?q=add%20a%20pet&limit=1', {
      key: agent.apiKey,
      clientId: agent.clientId,
    });
    expect(found.status).toBe(200);
    expect(found.body.tools.map((tool: { toolId: string }) => tool.toolId)).toEqual(['pets:::addPet']);
  });

  it('closing while segments are read leaves nothing running', async () => {
    const server = await startServer(backend.name);
    // Closed at once, while the read it started on listening may still be under way.
    await server.close();
    expect(server.logs.join('')).not.toMatch(/segments ahead of the first search failed/);
  });
});

describe('toolgate_search_tools', () => {
  it('is 0 on a server with no apps', async () => {
    const server = await startServer('pglite');
    try {
      await server.app.deps.search.warm();
      expect(await searchTools(server)).toBe(0);
    } finally {
      await server.close();
    }
  });
});
