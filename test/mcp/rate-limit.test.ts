/**
 * The rate limit of §6 over MCP (docs/reference.md "MCP"): each `tools/call` counts like a /proxyV2 call, and
 * a refused call is a tool error carrying `retry_after`, never an HTTP 429 the client cannot read.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { provisionAgent, registerApp } from '../support/agent.ts';
import { describeBackends } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';
import { connectV1, connectV2 } from './world.ts';

describeBackends('MCP rate limit', (backend) => {
  let server: TestServer;
  let upstream: Upstream;

  beforeAll(async () => {
    [server, upstream] = await Promise.all([
      startServer(backend.name, { env: { RATE_LIMIT_PER_KEY_PER_MIN: '2' } }),
      startUpstream(),
    ]);
    await registerApp(server, 'plain', {
      provider: 'acme.plain',
      openapi: upstream.openapi,
      auth: { type: 'none' },
    });
  });

  afterAll(async () => {
    await Promise.all([server?.close(), upstream?.close()]);
  });

  for (const era of ['v2', 'v1'] as const) {
    it(`answers the third call in a minute with a rate_limited tool error (${era}); listing is not counted`, async () => {
      const agent = await provisionAgent(server, ['tools:execute']);
      const world = { server, agent } as unknown as Parameters<typeof connectV2>[0];
      const { client, close } = await (era === 'v2' ? connectV2 : connectV1)(world, {
        urlElicitation: false,
      });
      try {
        await client.listTools();
        await client.listTools();
        await client.listTools();
        const before = upstream.requests.length;
        for (let i = 0; i < 2; i += 1) {
          const ok = await client.callTool({ name: 'plain__echo', arguments: {} });
          expect(ok.isError).toBeUndefined();
        }
        const limited = await client.callTool({ name: 'plain__echo', arguments: {} });
        expect(limited.isError).toBe(true);
        const body = limited.structuredContent as { retry_after: number };
        expect(body).toEqual({
          ok: false,
          error: 'rate_limited',
          message: 'Too many calls with this API key; retry later.',
          retry_after: body.retry_after,
        });
        expect(body.retry_after).toBeGreaterThanOrEqual(1);
        expect(body.retry_after).toBeLessThanOrEqual(60);
        expect((limited.content as Array<{ text: string }>)[0]?.text).toContain(
          `wait ${body.retry_after} seconds`,
        );
        expect(upstream.requests.length).toBe(before + 2);
      } finally {
        await close();
      }
    });
  }
});
