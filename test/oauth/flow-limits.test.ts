// Issue 23, item 6: OAuth flow starts are bounded (docs/reference.md "Limits"). /initiateOAuth counts
// against the key's rate limit, the same limiter as /proxyV2 (429 rate_limited + Retry-After), and
// a (client, user, app) keeps at most 20 live states: a 21st drops the oldest, whose callback then
// finds no state (400 state_invalid) while the newest still complete.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LIMITS } from '../../server/config.ts';
import { describeBackends } from '../support/db.ts';
import { type Harness, redirectQuery, startHarness } from './harness.ts';

const LIVE_STATES = 20;

/** The live (unused, unexpired) state rows of one (client, user, app). */
async function liveStates(h: Harness, userId: string): Promise<number> {
  return h.server.app.deps.db.prisma.oAuthState.count({
    where: {
      clientId: h.agent.clientId,
      userId,
      appId: 'demo',
      usedAt: null,
      expiresAt: { gt: new Date(h.clock.now()) },
    },
  });
}

describeBackends('OAuth flow starts count against the key’s rate limit', (backend) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(backend.name, { env: { RATE_LIMIT_PER_KEY_PER_MIN: '3' } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('answers 429 rate_limited with Retry-After past the limit, shared with /proxyV2', async () => {
    for (let i = 0; i < 3; i += 1) expect((await h.initiate(`limited-${i}`)).status).toBe(200);
    const refused = await h.initiate('limited-3');
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      ok: false,
      error: 'rate_limited',
      message: expect.any(String),
      retry_after: 60,
    });
    expect(refused.headers.get('retry-after')).toBe('60');
    // No state was stored for the refused start.
    expect(await liveStates(h, 'limited-3')).toBe(0);
    // One limit per key: the tool calls of the same key are refused too.
    expect((await h.proxy('limited-0')).status).toBe(429);

    h.clock.advance(60_000);
    expect((await h.initiate('limited-3')).status).toBe(200);
  });
});

describeBackends('OAuth states: at most 20 live per (client, user, app)', (backend) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(backend.name);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('drops the oldest live states past 20; their callbacks find no state, the newest still connect', async () => {
    const states: string[] = [];
    const urls: string[] = [];
    for (let i = 0; i < LIVE_STATES + 5; i += 1) {
      const started = await h.initiate('busy');
      expect(started.status).toBe(200);
      states.push(started.body.state);
      urls.push(started.body.authorizationUrl);
    }
    expect(await liveStates(h, 'busy')).toBe(LIVE_STATES);
    const kept = await Promise.all(
      states.map(async (state) => (await h.server.app.deps.states.find(state)) !== null),
    );
    expect(kept).toEqual([...Array(5).fill(false), ...Array(LIVE_STATES).fill(true)]);

    // Another user of the same client and app has states of their own.
    expect((await h.initiate('quiet')).status).toBe(200);
    expect(await liveStates(h, 'quiet')).toBe(1);
    expect(await liveStates(h, 'busy')).toBe(LIVE_STATES);

    const dropped = await h.provider.authorize(urls[0] as string, { account: 'busy' });
    const late = await h.callback(dropped);
    expect(late.status).toBe(400);
    expect(late.body).toEqual({ ok: false, error: 'state_invalid', message: expect.any(String) });

    const newest = await h.provider.authorize(urls.at(-1) as string, { account: 'busy' });
    expect(redirectQuery(await h.callback(newest)).get('status')).toBe('success');
    expect(await liveStates(h, 'busy')).toBe(LIVE_STATES - 1);
  });

  it('keeps expired and used states known (late callbacks still redirect): only live ones are bounded', async () => {
    const old = await h.initiate('expiring');
    h.clock.advance(LIMITS.oauthStateTtlMs + 1);
    for (let i = 0; i < LIVE_STATES; i += 1) expect((await h.initiate('expiring')).status).toBe(200);
    expect(await h.server.app.deps.states.find(old.body.state)).not.toBeNull();
    const back = await h.provider.authorize(old.body.authorizationUrl, { account: 'expiring' });
    const late = await h.callback(back);
    expect(late.status).toBe(302);
    expect(redirectQuery(late).get('reason')).toBe('state_invalid');
  });
});
