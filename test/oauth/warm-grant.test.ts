/**
 * Issue 14: a warm OAuth tool call runs no database query and no KMS call (the opened grant is
 * cached per process, see server/oauth/grant-cache.ts), and a change of the grant made through the
 * server is seen by the very next call. Counted from the server's own /metrics.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeBackends } from '../support/db.ts';
import { APP_ID, type Harness, startHarness } from './harness.ts';

async function counters(h: Harness): Promise<{ queries: number; kms: number }> {
  const text = await (await fetch(`${h.server.url}/metrics`)).text();
  const sum = (name: string) =>
    [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))].reduce(
      (n, m) => n + Number(m[1]),
      0,
    );
  return { queries: sum('toolgate_db_queries_total'), kms: sum('toolgate_kms_calls_total') };
}

const ME = { ok: true, data: { id: 'user-1', name: 'Ada' }, meta: expect.any(Object) };

describeBackends('a warm OAuth tool call', (backend) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(backend.name);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('runs no query and no KMS call, and sees a disconnect at once', async () => {
    expect((await h.connect('warm')).status).toBe(302);
    // The first call reads the grant (and writes the key's last_used_at): not warm yet.
    const first = await h.proxy('warm');
    expect([first.status, first.body]).toEqual([200, ME]);

    const before = await counters(h);
    for (let i = 0; i < 5; i += 1) {
      const reply = await h.proxy('warm');
      expect([reply.status, reply.body]).toEqual([200, ME]);
    }
    expect(await counters(h)).toEqual(before);

    // Written through this server: the next call reads the grant again and finds none.
    expect((await h.disconnect('warm')).status).toBe(200);
    const after = await h.proxy('warm');
    expect([after.status, after.body]).toEqual([
      401,
      {
        ok: false,
        error: 'auth_required',
        message: expect.any(String),
        auth_endpoint: '/initiateOAuth',
        app_id: APP_ID,
      },
    ]);
  });
});
