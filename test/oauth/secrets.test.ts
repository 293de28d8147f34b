import { afterAll, beforeAll, expect, it } from 'vitest';
import { LIMITS } from '../../server/config.ts';
import { describeBackends } from '../support/db.ts';
import type { Reply } from '../support/server.ts';
import { dumpDatabase, type Harness, redirectQuery, startHarness } from './harness.ts';

describeBackends('end-user OAuth: no secret in plaintext at rest, in logs or in answers', (backend) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(backend.name);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('finds no token, code, verifier, state or client secret in any table, log line or answer', async () => {
    const answers: Reply[] = [];
    const states: string[] = [];
    const keep = (reply: Reply) => {
      answers.push(reply);
      return reply;
    };
    for (const user of ['scan-1', 'scan-2']) {
      const started = keep(await h.initiate(user));
      states.push(started.body.state);
      const back = await h.provider.authorize(started.body.authorizationUrl, { account: user });
      expect(redirectQuery(keep(await h.callback(back))).get('status')).toBe('success');
      expect(keep(await h.proxy(user)).status).toBe(200);
    }
    h.clock.advance(300_000 - LIMITS.refreshSkewMs); // one refresh, so rotated tokens are in play
    expect(keep(await h.proxy('scan-1')).status).toBe(200);
    keep(await h.connections('scan-1'));
    const started = keep(await h.initiate('scan-3')); // a pending state: its verifier is stored
    states.push(started.body.state);
    expect(keep(await h.disconnect('scan-2')).status).toBe(200);

    const secrets = [...h.provider.secrets(), ...states];
    expect(h.provider.counts.refresh_token).toBe(1);
    expect(secrets.length).toBeGreaterThanOrEqual(10);
    const dump = await dumpDatabase(h.server);
    expect(dump).toContain('connections');
    expect(dump).toContain('oauth_states');
    const logs = h.server.logs.join('');
    const replies = answers.map((reply) => `${reply.text} ${reply.headers.get('location') ?? ''}`).join('\n');
    for (const secret of secrets) {
      expect(dump.includes(secret), 'a secret is stored in plaintext').toBe(false);
      expect(logs.includes(secret), 'a secret reached the log').toBe(false);
    }
    // The state is the caller's to hold (it is in the initiate answer); nothing else may show.
    for (const secret of h.provider.secrets()) {
      expect(replies.includes(secret), 'a secret reached an answer').toBe(false);
    }
  });
});
