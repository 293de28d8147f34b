import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { provisionAgent, registerApp } from '../support/agent.ts';
import { type PetsExample, petsRegistration, startPetsExample } from '../support/pets-example.ts';
import { call, startServer, type TestServer } from '../support/server.ts';

/**
 * GET /admin/tools answers what GET /tools answers, for an administrator and over every app (the
 * web console browses and searches tools with it): the same views, ranking and paging.
 */
describe('GET /admin/tools', () => {
  let server: TestServer;
  let pets: PetsExample;
  beforeAll(async () => {
    [server, pets] = await Promise.all([startServer('pglite'), startPetsExample()]);
    await registerApp(server, 'pets', petsRegistration(pets));
    await registerApp(server, 'pets2', petsRegistration(pets));
  });
  afterAll(async () => {
    await server?.close();
    await pets?.close();
  });

  it('answers the views GET /tools answers, over every app, without a client', async () => {
    // An agent allowed one app sees that app; the admin sees both.
    const agent = await provisionAgent(server, ['tools:execute:pets']);
    const asAgent = { key: agent.apiKey, clientId: agent.clientId };
    for (const query of ['', '?q=find%20a%20pet%20by%20id', '?limit=2']) {
      const agentView = await call(
        server.url,
        'GET',
        `/tools${query}${query ? '&' : '?'}appId=pets`,
        asAgent,
      );
      const adminView = await call(server.url, 'GET', `/admin/tools${query}${query ? '&' : '?'}appId=pets`, {
        key: server.adminKey,
      });
      expect(agentView.status).toBe(200);
      expect([query, adminView.status, adminView.body]).toEqual([query, 200, agentView.body]);
    }
    const all = await call(server.url, 'GET', '/admin/tools', { key: server.adminKey });
    expect(all.body.tools.map((tool: { toolId: string }) => tool.toolId)).toEqual([
      'pets:::listPets',
      'pets:::addPet',
      'pets:::getPetById',
      'pets2:::listPets',
      'pets2:::addPet',
      'pets2:::getPetById',
    ]);
    const ranked = await call(server.url, 'GET', '/admin/tools?q=add%20a%20new%20pet&limit=2', {
      key: server.adminKey,
    });
    expect(ranked.body.tools.map((tool: { toolId: string }) => tool.toolId)).toEqual([
      'pets:::addPet',
      'pets2:::addPet',
    ]);
  });

  it('needs an admin key, and refuses a cursor it did not give', async () => {
    const agent = await provisionAgent(server, ['tools:execute']);
    const denied = await call(server.url, 'GET', '/admin/tools', { key: agent.apiKey });
    expect([denied.status, denied.body]).toEqual([
      403,
      {
        ok: false,
        error: 'rbac_denied',
        message: 'This API key lacks the scope admin.',
        reason: 'scope_missing',
        scope: 'admin',
      },
    ]);
    const bad = await call(server.url, 'GET', '/admin/tools?cursor=nope', { key: server.adminKey });
    expect([bad.status, bad.body]).toEqual([
      400,
      {
        ok: false,
        error: 'invalid_request',
        message: 'The cursor is not one this server gave.',
        issues: [{ path: '/cursor', message: 'Must be the next_cursor of a previous page.' }],
      },
    ]);
  });
});
