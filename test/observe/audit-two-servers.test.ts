/**
 * The audit chain after mixed writes from two servers (issue 25: "verifies after a day of mixed
 * writes from two servers; any altered row is named"), in seconds: two real servers on one
 * PostgreSQL database take concurrent clients, redirect URIs, keys and apps for a few seconds
 * (scripts/bench/audit-mix.ts, which `npm run soak:audit` runs for as long as asked), with
 * verifications asked meanwhile; then the chain verifies with one event per write, and a row
 * altered in the database is named.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { mixedAuditedWrites, STEPS_PER_ROUND } from '../../scripts/bench/audit-mix.ts';
import { describeBackends } from '../support/db.ts';
import { call, startServer, type TestServer } from '../support/server.ts';

/** How long the servers take writes (a day in the soak; seconds here). */
const WRITES_MS = 5_000;

describeBackends('the audit chain under mixed writes from two servers', (backend) => {
  let first: TestServer;
  let second: TestServer;

  const verify = async (server: TestServer) => {
    const reply = await call(server.url, 'GET', '/admin/audit/verify', { key: server.adminKey });
    expect(reply.status).toBe(200);
    return reply.body;
  };
  const sql = (text: string) => first.app.deps.db.prisma.$executeRawUnsafe(text);

  beforeAll(async () => {
    if (backend.name !== 'postgres') return;
    first = await startServer('postgres');
    second = await startServer('postgres', { databaseUrl: first.databaseUrl });
  }, 120_000);

  afterAll(async () => {
    await second?.close();
    await first?.close();
  });

  it.runIf(backend.name === 'postgres')(
    'verifies after seconds of concurrent mixed writes, and names a row altered afterwards',
    async () => {
      const before = await verify(first);
      expect(before).toEqual({ ok: true, checked: expect.any(Number) });
      const targets = [first, second].map((s) => ({ url: s.url, adminKey: s.adminKey }));
      const mix = await mixedAuditedWrites(targets, {
        durationMs: WRITES_MS,
        workers: 6,
        verifyEvery: 4,
        minSteps: STEPS_PER_ROUND + 1,
      });
      expect(mix.failures).toEqual([]);
      // Every kind of administrative write happened, on both servers, with verifications between.
      expect(Object.keys(mix.byAction).sort()).toEqual([
        'api_key.created',
        'api_key.revoked',
        'app.deleted',
        'app.registered',
        'client.created',
        'redirect_uri.added',
        'redirect_uri.removed',
      ]);
      expect(mix.writes).toBeGreaterThanOrEqual(6 * STEPS_PER_ROUND);
      expect(mix.verifications).toBeGreaterThan(2);

      const total = before.checked + mix.writes;
      expect(await verify(first)).toEqual({ ok: true, checked: total });
      expect(await verify(second)).toEqual({ ok: true, checked: total });

      // One row in the middle, altered by someone with the table owner's rights.
      const middle = before.checked + Math.ceil(mix.writes / 2);
      await sql('ALTER TABLE audit_events DISABLE TRIGGER audit_events_append_only');
      try {
        await sql(`UPDATE audit_events SET target = target || 'x' WHERE seq = ${middle}`);
        expect(await verify(second)).toEqual({ ok: false, checked: middle, firstBadId: String(middle) });
        await sql(`UPDATE audit_events SET target = left(target, -1) WHERE seq = ${middle}`);
      } finally {
        await sql('ALTER TABLE audit_events ENABLE TRIGGER audit_events_append_only');
      }
      expect(await verify(first)).toEqual({ ok: true, checked: total });
    },
    120_000,
  );
});
