/**
 * Sign-in rows a day past their expiry are purged (abandoned logins and consent requests, spent
 * codes and tokens, elicitation links), and so are grants left with nothing; what expired
 * recently stays, so a spent code or refresh token presented again still revokes its family.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { PrismaClient } from '../../server/db/generated/client.ts';
import { purgeSignin, SIGNIN_KEPT_AFTER_EXPIRY_MS } from '../../server/signin/purge.ts';
import { describeBackends } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';

const HOUR = 60 * 60 * 1000;

describeBackends('sign-in purge', (backend) => {
  let server: TestServer;
  let prisma: PrismaClient;
  beforeAll(async () => {
    server = await startServer(backend.name);
    prisma = server.app.deps.db.prisma;
  });
  afterAll(async () => {
    await server?.close();
  });

  it('deletes what expired over a day ago and grants left with nothing; keeps the rest', async () => {
    const now = Date.now();
    const long = new Date(now - SIGNIN_KEPT_AFTER_EXPIRY_MS - HOUR);
    const recent = new Date(now - HOUR);
    const live = new Date(now + HOUR);
    const ages = { long, recent, live } as const;
    const created = new Date(now - 40 * 24 * HOUR);
    for (const [age, expiresAt] of Object.entries(ages)) {
      await prisma.signinLogin.create({
        data: {
          id: `login-${age}`,
          stateHash: `state-${age}`,
          verifier: Buffer.from('v'),
          returnTo: '/me',
          expiresAt,
          createdAt: created,
        },
      });
      await prisma.signinRequest.create({
        data: {
          id: `request-${age}`,
          clientId: 'c',
          redirectUri: 'http://127.0.0.1/cb',
          codeChallenge: 'x',
          scopes: [],
          expiresAt,
          createdAt: created,
        },
      });
      await prisma.oAuthStart.create({
        data: {
          id: `start-${age}`,
          clientId: 'c',
          userId: 'oidc:u',
          appId: 'a',
          expiresAt,
          createdAt: created,
        },
      });
    }
    // Grants: one whose every token expired long ago, one with a live token, one whose code
    // expired only recently (a second use must still find it), one made just now with no token yet.
    const grant = (id: string, createdAt: Date) =>
      prisma.signinGrant.create({ data: { id, clientId: 'c', userId: 'oidc:u', scopes: [], createdAt } });
    await grant('grant-spent', created);
    await grant('grant-live', created);
    await grant('grant-coded', created);
    await grant('grant-new', new Date(now));
    const token = (hash: string, grantId: string, expiresAt: Date) =>
      prisma.signinToken.create({ data: { hash, grantId, kind: 'refresh', expiresAt, createdAt: created } });
    await token('token-spent-1', 'grant-spent', long);
    await token('token-spent-2', 'grant-spent', long);
    await token('token-live', 'grant-live', live);
    await token('token-live-old', 'grant-live', long);
    const code = (codeHash: string, grantId: string | null, expiresAt: Date) =>
      prisma.signinCode.create({
        data: {
          codeHash,
          clientId: 'c',
          redirectUri: 'http://127.0.0.1/cb',
          codeChallenge: 'x',
          userId: 'oidc:u',
          scopes: [],
          expiresAt,
          grantId,
          createdAt: created,
        },
      });
    await code('code-long', null, long);
    await code('code-recent', 'grant-coded', recent);

    // 1 login + 1 request + 1 start + 1 code + 3 tokens expired long ago, then grant-spent.
    expect(await purgeSignin(prisma, now)).toBe(8);

    const ids = async () => ({
      logins: (await prisma.signinLogin.findMany({ orderBy: { id: 'asc' } })).map((row) => row.id),
      requests: (await prisma.signinRequest.findMany({ orderBy: { id: 'asc' } })).map((row) => row.id),
      starts: (await prisma.oAuthStart.findMany({ orderBy: { id: 'asc' } })).map((row) => row.id),
      codes: (await prisma.signinCode.findMany({ orderBy: { codeHash: 'asc' } })).map((row) => row.codeHash),
      tokens: (await prisma.signinToken.findMany({ orderBy: { hash: 'asc' } })).map((row) => row.hash),
      grants: (await prisma.signinGrant.findMany({ orderBy: { id: 'asc' } })).map((row) => row.id),
    });
    const kept = {
      logins: ['login-live', 'login-recent'],
      requests: ['request-live', 'request-recent'],
      starts: ['start-live', 'start-recent'],
      codes: ['code-recent'],
      tokens: ['token-live'],
      grants: ['grant-coded', 'grant-live', 'grant-new'],
    };
    expect(await ids()).toEqual(kept);
    // A second pass (another server's, or the next tick) finds nothing more.
    expect(await purgeSignin(prisma, now)).toBe(0);
    expect(await ids()).toEqual(kept);
  });
});
