import { afterAll, beforeAll, expect, it } from 'vitest';
import { manualClock } from '../../server/clock.ts';
import { describeBackends } from '../support/db.ts';
import { call, startServer, type TestServer } from '../support/server.ts';

/**
 * GET /admin/calls/stats (the web console's overview) over call-log records written straight into
 * the database at known times: every minute of the window by outcome, p50/p99 duration, the top
 * errors, filters, and what falls outside the window.
 */

const NOW = Date.parse('2026-11-25T12:30:30.000Z');
const MINUTE = 60_000;

describeBackends('GET /admin/calls/stats', (backend) => {
  let server: TestServer;
  const clock = manualClock(NOW);
  beforeAll(async () => {
    server = await startServer(backend.name, { clock });
    const record = (
      minutesAgo: number,
      outcome: string,
      durationMs: number,
      clientId = 'cli_a',
      appId = 'pets',
    ) => ({
      at: new Date(NOW - minutesAgo * MINUTE),
      durationMs,
      surface: 'rest',
      keyId: 'key_x',
      clientId,
      userId: null,
      appId,
      toolId: `${appId}:::getPetById`,
      outcome,
      status: outcome === 'ok' ? 200 : outcome === 'upstream_error' ? 502 : 400,
      upstreamStatus: null,
      idempotentReplay: false,
      requestId: `req_${minutesAgo}_${outcome}_${durationMs}`,
    });
    await server.app.deps.db.prisma.callLogEntry.createMany({
      data: [
        // Durations 1..100 ms of `ok` calls in the current minute: p50 50.5, p99 99.01.
        ...Array.from({ length: 100 }, (_, i) => record(0, 'ok', i + 1)),
        record(1, 'upstream_error', 200),
        record(1, 'upstream_error', 300),
        record(2, 'invalid_parameters', 5, 'cli_b', 'other'),
        // Outside a 3-minute window, inside the hour.
        record(10, 'rate_limited', 1),
        // Outside every window.
        record(24 * 60 + 5, 'tool_not_found', 1),
      ],
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  const stats = (query: string) =>
    call(server.url, 'GET', `/admin/calls/stats${query}`, { key: server.adminKey });
  const minute = (minutesAgo: number) =>
    new Date(Date.parse('2026-11-25T12:30:00.000Z') - minutesAgo * MINUTE).toISOString();

  it('answers every minute of the window by outcome, p50/p99 and the top errors', async () => {
    const reply = await stats('?minutes=3');
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      since: minute(2),
      until: new Date(NOW).toISOString(),
      total: 103,
      errors: 3,
      p50Ms: 51,
      p99Ms: expect.closeTo(198, 6),
      minutes: [
        { at: minute(2), counts: { invalid_parameters: 1 } },
        { at: minute(1), counts: { upstream_error: 2 } },
        { at: minute(0), counts: { ok: 100 } },
      ],
      topErrors: [
        { outcome: 'upstream_error', count: 2 },
        { outcome: 'invalid_parameters', count: 1 },
      ],
    });
  });

  it('filters by client and app, and defaults to the last hour', async () => {
    const onlyA = await stats('?minutes=3&clientId=cli_a');
    expect([onlyA.body.total, onlyA.body.errors, onlyA.body.topErrors]).toEqual([
      102,
      2,
      [{ outcome: 'upstream_error', count: 2 }],
    ]);
    const other = await stats('?minutes=3&appId=other');
    expect([other.body.total, other.body.p50Ms, other.body.p99Ms]).toEqual([1, 5, 5]);
    const hour = await stats('');
    expect([hour.body.minutes.length, hour.body.total, hour.body.since]).toEqual([60, 104, minute(59)]);
    expect(hour.body.topErrors).toContainEqual({ outcome: 'rate_limited', count: 1 });
    const none = await stats('?minutes=3&clientId=cli_nobody');
    expect([none.body.total, none.body.p50Ms, none.body.p99Ms, none.body.topErrors]).toEqual([
      0,
      null,
      null,
      [],
    ]);
  });

  it('refuses a window past a day, and callers without admin', async () => {
    const long = await stats('?minutes=1441');
    expect([long.status, long.body.error, long.body.issues[0].path]).toEqual([
      400,
      'invalid_request',
      '/minutes',
    ]);
    const anonymous = await call(server.url, 'GET', '/admin/calls/stats');
    expect([anonymous.status, anonymous.body.error]).toEqual([401, 'invalid_api_key']);
  });
});
