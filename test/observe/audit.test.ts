/**
 * The audit trail (docs/reference.md "Audit trail"): an event for every administrative and
 * connection change, without secrets; hash-chained so that /admin/audit/verify names the first
 * event altered in the database; append-only in the database itself; one valid chain when two
 * servers on one PostgreSQL append at once.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTrpcClient } from '../../sdk/src/trpc.ts';
import { HEADER } from '../../shared/headers.ts';
import { type Agent, provisionAgent } from '../support/agent.ts';
import { describeBackends } from '../support/db.ts';
import { call, startServer, type TestServer } from '../support/server.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

const APP_SECRET = 'app-client-secret-5d1e-never-audited';

describeBackends('the audit trail', (backend) => {
  let server: TestServer;
  let upstream: Upstream;
  /** A key with scope admin of its own (the environment's admin key acts as `system`). */
  let operator: Agent;
  let agent: Agent;
  let newKey: { keyId: string; apiKey: string };
  let clientId: string;

  const as = (key: string) => (method: string, path: string, body?: unknown) =>
    call(server.url, method, path, { key, ...(body === undefined ? {} : { body }) });
  const events = async (query = '') => {
    const reply = await call(server.url, 'GET', `/admin/audit${query}`, { key: server.adminKey });
    expect(reply.status).toBe(200);
    return reply.body.events as Array<Record<string, unknown>>;
  };
  const verify = async () =>
    (await call(server.url, 'GET', '/admin/audit/verify', { key: server.adminKey })).body;
  const sql = (text: string) => server.app.deps.db.prisma.$executeRawUnsafe(text);

  beforeAll(async () => {
    [server, upstream] = await Promise.all([startServer(backend.name), startUpstream()]);
    operator = await provisionAgent(server, ['admin'], { name: 'operators' });
    agent = await provisionAgent(server, ['tools:execute', 'connections:write']);
    const admin = as(operator.apiKey);
    clientId = (await admin('POST', '/admin/clients', { name: 'audited agent' })).body.clientId;
    await admin('POST', `/admin/clients/${clientId}/redirect-uris`, { uri: 'https://agent.example/back' });
    await admin(
      'DELETE',
      `/admin/clients/${clientId}/redirect-uris?uri=${encodeURIComponent('https://agent.example/back')}`,
    );
    newKey = (
      await admin('POST', `/admin/clients/${clientId}/api-keys`, { name: 'ci', scopes: ['tools:execute'] })
    ).body;
    expect((await admin('DELETE', `/admin/api-keys/${newKey.keyId}`)).status).toBe(200);
    const registration = {
      provider: 'acme.audited',
      openapi: upstream.openapi,
      auth: {
        type: 'oauth2',
        authorizationUrl: `${upstream.origin}/authorize`,
        tokenUrl: `${upstream.origin}/token`,
        clientId: 'app-client',
        clientSecret: APP_SECRET,
        scopes: ['read'],
      },
    };
    expect((await admin('PUT', '/admin/apps/audited', registration)).status).toBe(200);
    // A user's connection, then the agent disconnects it (no revocation endpoint: just forgotten).
    await server.app.deps.db.prisma.connection.create({
      data: {
        id: 'conn_audit_1',
        clientId: agent.clientId,
        userId: 'user-7',
        appId: 'audited',
        status: 'active',
        scopes: ['read'],
        credential: new Uint8Array([1, 2, 3]),
      },
    });
    const gone = await call(server.url, 'DELETE', '/connections/audited', {
      key: agent.apiKey,
      clientId: agent.clientId,
      headers: { [HEADER.userId]: 'user-7' },
    });
    expect(gone.status, server.logs.filter((l) => l.includes('error')).join('\n')).toBe(200);
    expect((await admin('DELETE', '/admin/apps/audited')).status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([server?.close(), upstream?.close()]);
  });

  const event = (
    action: string,
    target: string,
    details: Record<string, unknown>,
    actor = operator.keyId,
  ) => ({
    id: expect.stringMatching(/^\d+$/),
    at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    actor,
    action,
    target,
    details,
    hash: expect.stringMatching(/^[0-9a-f]{64}$/),
  });

  it('records every administrative and connection change, newest first, with who made it', async () => {
    const all = await events();
    expect(all).toEqual([
      event('app.deleted', 'audited', {}),
      event(
        'connection.deleted',
        'conn_audit_1',
        { clientId: agent.clientId, userId: 'user-7', appId: 'audited' },
        agent.keyId,
      ),
      event('app.registered', 'audited', { provider: 'acme.audited', tools: expect.any(Number), skipped: 0 }),
      event('api_key.revoked', newKey.keyId, {}),
      event('api_key.created', newKey.keyId, { clientId, name: 'ci', scopes: ['tools:execute'] }),
      event('redirect_uri.removed', clientId, { uri: 'https://agent.example/back' }),
      event('redirect_uri.added', clientId, { uri: 'https://agent.example/back' }),
      event('client.created', clientId, { name: 'audited agent' }),
      // provisionAgent's, made with the environment's admin key: the server's own, `system`.
      event(
        'api_key.created',
        agent.keyId,
        { clientId: agent.clientId, name: null, scopes: ['tools:execute', 'connections:write'] },
        'system',
      ),
      event('client.created', agent.clientId, { name: 'agent' }, 'system'),
      event(
        'api_key.created',
        operator.keyId,
        { clientId: operator.clientId, name: null, scopes: ['admin'] },
        'system',
      ),
      event('client.created', operator.clientId, { name: 'operators' }, 'system'),
    ]);
    expect(all.map((e) => e.id)).toEqual(['12', '11', '10', '9', '8', '7', '6', '5', '4', '3', '2', '1']);
    const text = JSON.stringify(all);
    for (const secret of [APP_SECRET, newKey.apiKey, operator.apiKey, agent.apiKey])
      expect(text).not.toContain(secret);
  });

  it('chains each hash over the previous hash and the canonical JSON of the event', async () => {
    const chain = (await events()).reverse();
    let previous = '';
    for (const { hash, ...rest } of chain) {
      const expected = createHash('sha256')
        .update(previous)
        .update(canonicalize(rest) as string)
        .digest('hex');
      expect(hash).toBe(expected);
      previous = hash as string;
    }
  });

  it('filters by action, actor and time, pages by cursor, and answers the same over tRPC', async () => {
    const all = await events();
    expect((await events('?action=api_key.created')).map((e) => e.target)).toEqual([
      newKey.keyId,
      agent.keyId,
      operator.keyId,
    ]);
    expect((await events(`?actor=${agent.keyId}`)).map((e) => e.action)).toEqual(['connection.deleted']);
    expect(await events('?since=2999-01-01T00:00:00Z')).toEqual([]);
    expect(await events(`?until=${encodeURIComponent('2000-01-01T00:00:00Z')}`)).toEqual([]);
    const seen: unknown[] = [];
    let query = '?limit=5';
    for (let page = 0; page < 5; page += 1) {
      const reply = await call(server.url, 'GET', `/admin/audit${query}`, { key: server.adminKey });
      seen.push(...reply.body.events);
      if (!reply.body.next_cursor) break;
      query = `?limit=5&cursor=${reply.body.next_cursor}`;
    }
    expect(seen).toEqual(all);
    const trpc = createTrpcClient({ baseUrl: server.url, apiKey: server.adminKey, clientId: 'unused' });
    expect(await trpc.admin.audit.list.query({ limit: 3 })).toEqual({
      events: all.slice(0, 3),
      next_cursor: expect.any(String),
    });
    expect(await trpc.admin.audit.verify.query({})).toEqual({ ok: true, checked: 12 });
    const denied = await call(server.url, 'GET', '/admin/audit/verify', { key: agent.apiKey });
    expect(denied.status).toBe(403);
    expect((await call(server.url, 'GET', '/admin/audit?cursor=x')).status).toBe(401);
    expect(
      (await call(server.url, 'GET', '/admin/audit?cursor=bm9wZQ', { key: server.adminKey })).status,
    ).toBe(400);
  });

  it('refuses to change or remove an event in the database (append-only)', async () => {
    await expect(sql(`UPDATE audit_events SET actor = 'someone' WHERE seq = 3`)).rejects.toThrow(
      /append-only/,
    );
    await expect(sql('DELETE FROM audit_events WHERE seq = 3')).rejects.toThrow(/append-only/);
    expect(await verify()).toEqual({ ok: true, checked: 12 });
  });

  it('names the first event altered in the database, and the first missing one', async () => {
    expect(await verify()).toEqual({ ok: true, checked: 12 });
    // Someone with the table owner's rights: the trigger off, one event's details changed.
    await sql('ALTER TABLE audit_events DISABLE TRIGGER audit_events_append_only');
    try {
      const [row] = await server.app.deps.db.prisma.$queryRawUnsafe<{ details: string }[]>(
        'SELECT details FROM audit_events WHERE seq = 7',
      );
      await sql(`UPDATE audit_events SET details = '{"uri":"https://evil.example/back"}' WHERE seq = 7`);
      expect(await verify()).toEqual({ ok: false, checked: 7, firstBadId: '7' });
      await sql(`UPDATE audit_events SET details = '${row?.details}' WHERE seq = 7`);
      expect(await verify()).toEqual({ ok: true, checked: 12 });
      // A hash rewritten to match new content still breaks the next link.
      await sql(`UPDATE audit_events SET actor = 'nobody' WHERE seq = 4`);
      expect(await verify()).toEqual({ ok: false, checked: 4, firstBadId: '4' });
      await sql(`UPDATE audit_events SET actor = 'system' WHERE seq = 4`);
      // An event removed: the one that followed it no longer follows.
      const saved = await server.app.deps.db.prisma.$queryRawUnsafe<Record<string, unknown>[]>(
        'SELECT * FROM audit_events WHERE seq = 5',
      );
      await sql('DELETE FROM audit_events WHERE seq = 5');
      expect(await verify()).toEqual({ ok: false, checked: 5, firstBadId: '5' });
      await server.app.deps.db.prisma.auditEvent.create({ data: saved[0] as never });
      expect(await verify()).toEqual({ ok: true, checked: 12 });
      // The newest event removed: the head still names it.
      const last = await server.app.deps.db.prisma.$queryRawUnsafe<Record<string, unknown>[]>(
        'SELECT * FROM audit_events WHERE seq = 12',
      );
      await sql('DELETE FROM audit_events WHERE seq = 12');
      expect(await verify()).toEqual({ ok: false, checked: 11, firstBadId: '12' });
      await server.app.deps.db.prisma.auditEvent.create({ data: last[0] as never });
      // An event written past the head (around the chain, not appended to it), hash and all.
      const forged = { ...(last[0] as Record<string, unknown>), seq: 13n, target: 'forged' };
      await server.app.deps.db.prisma.auditEvent.create({ data: forged as never });
      expect(await verify()).toEqual({ ok: false, checked: 13, firstBadId: '13' });
      await sql('DELETE FROM audit_events WHERE seq = 13');
    } finally {
      await sql('ALTER TABLE audit_events ENABLE TRIGGER audit_events_append_only');
    }
    expect(await verify()).toEqual({ ok: true, checked: 12 });
  });

  it.runIf(backend.name === 'postgres')(
    'two servers on one PostgreSQL appending at once make one valid chain',
    async () => {
      const second = await startServer('postgres', { databaseUrl: server.databaseUrl });
      try {
        const before = (await verify()).checked as number;
        const created = await Promise.all(
          Array.from({ length: 40 }, (_, i) =>
            call(i % 2 === 0 ? server.url : second.url, 'POST', '/admin/clients', {
              key: i % 2 === 0 ? server.adminKey : second.adminKey,
              body: { name: `concurrent ${i}` },
            }),
          ),
        );
        expect(created.map((r) => r.status)).toEqual(Array(40).fill(200));
        expect(await verify()).toEqual({ ok: true, checked: before + 40 });
        const latest = await events(`?action=client.created&limit=40`);
        expect(latest.map((e) => Number(e.id))).toEqual(
          Array.from({ length: 40 }, (_, i) => before + 40 - i),
        );
      } finally {
        await second.close();
      }
    },
    120_000,
  );
});
