// Issue 23, item 6: what 2025-era MCP clients declared at `initialize` is remembered per (API key,
// user), at most 50 users per key (docs/reference.md "Limits"): the least recently initialized are
// forgotten, so one key naming endless user ids cannot grow the memory without bound. A forgotten
// client only loses the hint: its next call needing authorization gets the link in a tool error.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Agent, agentHeaders, provisionAgent } from '../support/agent.ts';
import { describeBackends } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { rawMcp } from './world.ts';

const REMEMBERED = 50;

function initialize(urlElicitation: boolean): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: '2025-11-25',
      capabilities: urlElicitation ? { elicitation: { url: {} } } : {},
      clientInfo: { name: 'remembered', version: '1' },
    },
  });
}

describeBackends('MCP: 2025-era clients remembered', (backend) => {
  let server: TestServer;
  let agent: Agent;
  let other: Agent;

  beforeAll(async () => {
    server = await startServer(backend.name);
    [agent, other] = await Promise.all([
      provisionAgent(server, ['tools:execute']),
      provisionAgent(server, ['tools:execute']),
    ]);
  });
  afterAll(async () => {
    await server?.close();
  });

  const remembered = async (keyId: string) =>
    (
      await server.app.deps.db.prisma.mcpClient.findMany({
        where: { apiKeyId: keyId },
        select: { userId: true, urlElicitation: true },
      })
    )
      .map((row) => row.userId)
      .sort();

  it('keeps the 50 users of a key that initialized last', async () => {
    await rawMcp(server.url, initialize(true), agentHeaders(other, 'someone'));
    const users = Array.from({ length: REMEMBERED + 5 }, (_, i) => `user-${String(i).padStart(2, '0')}`);
    for (const user of users) {
      const reply = await rawMcp(server.url, initialize(true), agentHeaders(agent, user));
      expect(reply.status).toBe(200);
    }
    expect(await remembered(agent.keyId)).toEqual(users.slice(5));
    // Initializing again makes a user the most recent: the next newcomer drops user-05 instead.
    await rawMcp(server.url, initialize(false), agentHeaders(agent, 'user-06'));
    await rawMcp(server.url, initialize(true), agentHeaders(agent, 'newcomer'));
    expect(await remembered(agent.keyId)).toEqual([...users.slice(6), 'newcomer'].sort());
    // Another key's memory is its own.
    expect(await remembered(other.keyId)).toEqual(['someone']);
  });
});
