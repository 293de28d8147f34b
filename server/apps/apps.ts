import type { Issue } from '../../shared/errors.ts';
import type { AppAuth, AppView, PublicAuth, PutAppInput } from '../../shared/schemas/apps.ts';
import { compileApp } from '../catalog/catalog.ts';
import type { Envelope } from '../crypto/envelope.ts';
import type { Prisma, PrismaClient } from '../db/generated/client.ts';

/** The envelope context of an app's secret: a blob copied to another app does not open. */
export function appSecretContext(appId: string): string {
  return `app:${appId}`;
}

function splitSecret(auth: AppAuth): { publicAuth: PublicAuth; secret: string | null } {
  switch (auth.type) {
    case 'none':
      return { publicAuth: auth, secret: null };
    case 'api_key': {
      const { value, ...rest } = auth;
      return { publicAuth: rest, secret: value };
    }
    case 'oauth2': {
      const { clientSecret, ...rest } = auth;
      return { publicAuth: rest, secret: clientSecret };
    }
  }
}

export type PutAppOutcome = { ok: true; appId: string; tools: string[] } | { ok: false; issues: Issue[] };

/** Validates and stores (create or replace) an app registration; the secret is sealed first. */
export async function putApp(
  prisma: PrismaClient,
  envelope: Envelope,
  input: PutAppInput,
  now: Date,
): Promise<PutAppOutcome> {
  const compiled = await compileApp(input.openapi);
  if (!compiled.ok) return compiled;
  const baseUrl = input.baseUrl ?? compiled.app.serverUrl;
  if (!baseUrl) {
    return {
      ok: false,
      issues: [
        {
          path: '/baseUrl',
          message: 'A base URL is required: the OpenAPI document has no absolute http(s) servers[0].url.',
        },
      ],
    };
  }
  const tools = [...compiled.app.tools.keys()];
  const { publicAuth, secret } = splitSecret(input.auth);
  const authSecret = secret === null ? null : await envelope.seal(secret, appSecretContext(input.appId));
  const data = {
    provider: input.provider,
    baseUrl: input.baseUrl ?? null,
    // Kept as text: jsonb does not keep key order, and the tools (their order, the media types
    // picked) must come out of the stored document exactly as they came out of the registration.
    openapi: {
      $text: typeof input.openapi === 'string' ? input.openapi : JSON.stringify(input.openapi),
    } as Prisma.InputJsonValue,
    authType: input.auth.type,
    authConfig: publicAuth as Prisma.InputJsonValue,
    authSecret: authSecret === null ? null : new Uint8Array(authSecret),
    updatedAt: now,
  };
  await prisma.app.upsert({
    where: { id: input.appId },
    create: { id: input.appId, ...data, createdAt: now },
    update: data,
    select: { id: true },
  });
  return { ok: true, appId: input.appId, tools };
}

export async function deleteApp(prisma: PrismaClient, appId: string): Promise<boolean> {
  const { count } = await prisma.app.deleteMany({ where: { id: appId } });
  return count > 0;
}

/** The stored document: its YAML/JSON text kept under `$text` (an object in rows stored before that). */
export function storedDocument(openapi: unknown): unknown {
  if (openapi && typeof openapi === 'object' && '$text' in openapi && Object.keys(openapi).length === 1) {
    return (openapi as { $text: string }).$text;
  }
  return openapi;
}

export function appView(app: {
  appId: string;
  provider: string;
  baseUrl: string;
  auth: PublicAuth;
  tools: string[];
  updatedAt: Date;
}): AppView {
  return { ...app, updatedAt: app.updatedAt.toISOString() };
}
