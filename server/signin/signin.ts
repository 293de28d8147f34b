import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Envelope } from '../crypto/envelope.ts';
import type { PrismaClient } from '../db/generated/client.ts';
import { sharedSecret } from '../mcp/shared-secret.ts';
import { AccessTokenVerifier } from './access-tokens.ts';
import { SigninClients } from './clients.ts';
import { LoginProvider } from './login.ts';
import { MetadataDocumentFetcher } from './metadata-document.ts';
import { startSigninPurge } from './purge.ts';
import { SessionCookies } from './session.ts';
import { SigninTokens } from './tokens.ts';

/**
 * MCP sign-in's long-lived parts (docs/reference.md "MCP sign-in"), built once in app.ts when
 * LOGIN_OIDC_* name a provider; absent otherwise, and then none of its paths exist.
 */
export interface Signin {
  /** PUBLIC_URL: this authorization server's issuer identifier. */
  issuer: string;
  clients: SigninClients;
  login: LoginProvider;
  sessions: SessionCookies;
  tokens: SigninTokens;
  /** What /mcp checks its bearer tokens with (auth/agent.ts). */
  accessTokens: AccessTokenVerifier;
  close(): Promise<void>;
}

export interface SigninParts {
  config: Config;
  prisma: PrismaClient;
  envelope: Envelope;
  clock: Clock;
  logger: Logger;
}

export function createSignin({ config, prisma, envelope, clock, logger }: SigninParts): Signin | undefined {
  if (!config.login) return undefined;
  const documents = new MetadataDocumentFetcher(config.cimdAllowHttpLoopback);
  const clients = new SigninClients(prisma, clock, documents);
  // The session key is made once per cluster and read once per server.
  let key: Promise<Buffer> | undefined;
  const sessionKey = () => {
    key ??= sharedSecret(prisma, envelope, 'signin-session');
    key.catch(() => {
      key = undefined;
    });
    return key;
  };
  const purge = startSigninPurge(prisma, clock, logger);
  return {
    issuer: config.publicUrl,
    clients,
    login: new LoginProvider(config.login, config.publicUrl, prisma, envelope, clock, logger),
    sessions: new SessionCookies(sessionKey, config.publicUrl, () => clock.now()),
    tokens: new SigninTokens(prisma, clock, clients, config.publicUrl),
    accessTokens: new AccessTokenVerifier(prisma, clock),
    close: async () => {
      await purge.stop();
      await documents.close();
    },
  };
}
