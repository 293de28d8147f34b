// Issue 23, item 2: what the token endpoint answers a refresh may become a 502's `upstream_body`;
// nothing the refresh request carried (the client secret, the Basic credential built from it, the
// refresh token) may come back in it, in any form the provider writes it back in.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeBackends } from '../support/db.ts';
import { dumpDatabase, type Harness, redirectQuery, startHarness } from './harness.ts';

/** A client secret whose form encodings, percent encodings and JSON escapes all differ. */
const CLIENT_SECRET = 'Zm9v+/SeCr3t Key~*!"==';

const SECRET_FIELDS = new Set(['refresh_token', 'client_secret']);

/** What the echoing token endpoint received, written back four ways in a 500. */
function echo(authorization: string, body: string): string {
  const basic = /^Basic (.+)$/.exec(authorization)?.[1];
  const decoded = basic ? Buffer.from(basic, 'base64').toString('utf8') : '';
  return [authorization, decoded, body, JSON.stringify(Object.fromEntries(new URLSearchParams(body)))].join(
    '\n',
  );
}

/** RFC 6749 Appendix B form encoding as oauth4webapi writes the parts of a Basic credential. */
const strictForm = (text: string) =>
  encodeURIComponent(text)
    .replace(/[-_.!~*'()]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replaceAll('%20', '+');

describeBackends('end-user OAuth: the token endpoint’s answer to a refresh is redacted', (backend) => {
  let h: Harness;
  let tokenEndpoint: Server;
  let tokenUrl: string;
  const received: Array<{ authorization: string; body: string }> = [];

  beforeAll(async () => {
    tokenEndpoint = createServer(async (req, res) => {
      let body = '';
      for await (const chunk of req) body += chunk;
      const authorization = req.headers.authorization ?? '';
      received.push({ authorization, body });
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(echo(authorization, body));
    });
    await new Promise<void>((resolve) => tokenEndpoint.listen(0, '127.0.0.1', resolve));
    tokenUrl = `http://127.0.0.1:${(tokenEndpoint.address() as AddressInfo).port}/token`;
    // Access tokens of 30 s: inside the refresh window at once, so every call refreshes.
    h = await startHarness(backend.name, { provider: { clientSecret: CLIENT_SECRET, accessTokenTtl: 30 } });
  });
  afterAll(async () => {
    await h?.close();
    tokenEndpoint?.closeAllConnections();
    await new Promise((resolve) => tokenEndpoint?.close(resolve));
  });

  it.each([
    [
      'client_secret_basic',
      'Basic [REDACTED]\n[REDACTED]\nrefresh_token=[REDACTED]&grant_type=refresh_token',
    ],
    [
      'client_secret_post',
      '\n\nrefresh_token=[REDACTED]&grant_type=refresh_token&client_id=toolgate-test-client&client_secret=[REDACTED]',
    ],
  ])(
    'keeps the secrets of a %s refresh out of upstream_body, the log and the database',
    async (method, head) => {
      const user = `echoed-${method}`;
      expect(redirectQuery(await h.connect(user)).get('status')).toBe('success');
      await h.registerApp({ tokenUrl, tokenAuthMethod: method });
      try {
        const reply = await h.proxy(user);
        const sent = received.at(-1) as { authorization: string; body: string };
        const refreshToken = new URLSearchParams(sent.body).get('refresh_token') as string;
        const json = JSON.stringify(
          Object.fromEntries(
            [...new URLSearchParams(sent.body)].map(([name, value]) => [
              name,
              SECRET_FIELDS.has(name) ? '[REDACTED]' : value,
            ]),
          ),
        );
        expect(reply.status).toBe(502);
        expect(reply.body).toEqual({
          ok: false,
          error: 'upstream_error',
          message: 'The token endpoint answered 500 to a refresh.',
          upstream_status: 500,
          upstream_body: `${head}\n${json}`,
        });

        const basic = /^Basic (.+)$/.exec(sent.authorization)?.[1] ?? '';
        const forbidden = [
          CLIENT_SECRET,
          encodeURIComponent(CLIENT_SECRET),
          new URLSearchParams({ s: CLIENT_SECRET }).toString().slice(2),
          strictForm(CLIENT_SECRET),
          JSON.stringify(CLIENT_SECRET).slice(1, -1),
          refreshToken,
          ...(basic ? [basic, Buffer.from(basic, 'base64').toString('utf8')] : []),
        ];
        const logs = h.server.logs.join('');
        const stored = await dumpDatabase(h.server);
        for (const secret of forbidden) {
          expect(reply.text).not.toContain(secret);
          expect(logs).not.toContain(secret);
          expect(stored).not.toContain(secret);
        }
      } finally {
        await h.registerApp();
      }
    },
  );
});
