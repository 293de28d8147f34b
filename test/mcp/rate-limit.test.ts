/**
 * The rate limit of §6 over MCP (docs/reference.md "MCP"): each `tools/call` counts like a /proxyV2 call, and
 * a refused call is a tool error carrying `retry_after`, never an HTTP 429 the client cannot read.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeBackends } from '../support/db.ts';
import { startWorld, type World } from '../support/world.ts';
import { connectV1, connectV2 } from './world.ts';

describeBackends('MCP rate limit', (backend) => {
  let world: World;

  beforeAll(async () => {
    world = await startWorld(backend.name, {
      server: { env: { RATE_LIMIT_PER_KEY_PER_MIN: '2' } },
      apps: { plain: { provider: 'acme.plain' } },
    });
  });

  afterAll(async () => {
    await world?.close();
  });

  for (const era of ['v2', 'v1'] as const) {
    it(`answers the third call in a minute with a rate_limited tool error (${era}); listing is not counted`, async () => {
      // A key of its own per era: each starts with the whole minute's allowance.
      const agent = await world.newAgent(['tools:execute']);
      const { client, close } = await (era === 'v2' ? connectV2 : connectV1)(
        { server: world.server, agent },
        { urlElicitation: false },
      );
      try {
        await client.listTools();
        await client.listTools();
        await client.listTools();
        const before = world.upstream.requests.length;
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
        expect(world.upstream.requests.length).toBe(before + 2);
      } finally {
        await close();
      }
    });
  }
});
