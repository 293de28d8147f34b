import { afterAll, beforeAll, expect, it } from 'vitest';
import { contractError, createTrpcClient } from '../../sdk/src/trpc.ts';
import { describeBackends } from '../support/db.ts';
import { startWorld, type World } from './world.ts';

describeBackends('SDK: the typed tRPC client', (backend) => {
  let w: World;
  beforeAll(async () => {
    w = await startWorld(backend.name);
  });
  afterAll(async () => {
    await w?.close();
  });

  it('lists tools and runs one over /trpc', async () => {
    const trpc = createTrpcClient({
      baseUrl: w.server.url,
      apiKey: w.agent.apiKey,
      clientId: w.agent.clientId,
    });
    const { tools } = await trpc.tools.list.query({ appId: 'open' });
    expect(tools.map((t) => t.toolId)).toContain('open:::getItem');
    const answer = await trpc.proxy.mutate({ toolId: 'open:::getItem', parameters: { itemId: '7' } });
    expect(answer).toEqual({
      ok: true,
      data: { id: '7', title: 'An item' },
      meta: { tool_id: 'open:::getItem', duration_ms: expect.any(Number), provider: 'toolgate.test' },
    });
  });

  it('carries the contract body of an error under data.contract', async () => {
    const trpc = createTrpcClient({
      baseUrl: w.server.url,
      apiKey: w.agent.apiKey,
      clientId: w.agent.clientId,
      userId: 'nobody',
    });
    const error = await trpc.proxy
      .mutate({ toolId: 'demo:::getMe', parameters: {} })
      .catch((e: unknown) => e);
    const body = contractError(error);
    if (body?.error !== 'auth_required') throw new Error(`unexpected: ${String(error)}`);
    expect(body.app_id).toBe('demo');
    const connections = await trpc.connections.list.query({});
    expect(connections).toEqual({ connections: [] });

    const wrong = createTrpcClient({
      baseUrl: w.server.url,
      apiKey: 'tg_key_nope',
      clientId: w.agent.clientId,
    });
    expect(contractError(await wrong.tools.list.query({}).catch((e: unknown) => e))?.error).toBe(
      'invalid_api_key',
    );
    expect(contractError(new Error('not trpc'))).toBeUndefined();
  });

  it('serves the admin procedures with an admin key', async () => {
    const trpc = createTrpcClient({ baseUrl: w.server.url, apiKey: w.server.adminKey });
    const created = await trpc.admin.clients.create.mutate({ name: 'over trpc' });
    const { clients } = await trpc.admin.clients.list.query({});
    expect(clients).toContainEqual(created);
    const app = await trpc.admin.apps.get.query({ appId: 'demo' });
    expect(app.auth.type).toBe('oauth2');
    expect(JSON.stringify(app)).not.toContain(w.provider.clientSecret);
  });
});
