import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { PrismaClient } from '../db/generated/client.ts';
import { SigninClients } from './clients.ts';
import { MetadataDocumentFetcher } from './metadata-document.ts';

/**
 * MCP sign-in's long-lived parts (docs/reference.md "MCP sign-in"), built once in app.ts when
 * LOGIN_OIDC_* name a provider; absent otherwise, and then none of its paths exist.
 */
export interface Signin {
  /** PUBLIC_URL: this authorization server's issuer identifier. */
  issuer: string;
  clients: SigninClients;
  close(): Promise<void>;
}

export function createSignin(config: Config, prisma: PrismaClient, clock: Clock): Signin | undefined {
  if (!config.login) return undefined;
  const documents = new MetadataDocumentFetcher(config.cimdAllowHttpLoopback);
  return {
    issuer: config.publicUrl,
    clients: new SigninClients(prisma, clock, documents),
    close: () => documents.close(),
  };
}
