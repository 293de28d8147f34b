import type { Issue } from '../../shared/errors.ts';
import type { AppAuth, AppView, PublicAuth, PutAppInput } from '../../shared/schemas/apps.ts';
import type { DocumentCompiler } from '../catalog/compiler.ts';
import type { ServiceParameter, SkippedOperation } from '../catalog/types.ts';
import type { Envelope } from '../crypto/envelope.ts';
import type { Prisma, PrismaClient } from '../db/generated/client.ts';
import { err, ok, type Result } from '../result.ts';

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

export interface PutAppValue {
  appId: string;
  tools: string[];
  skipped: SkippedOperation[];
}

/** The parameter an api_key app's service credential fills in: never part of a tool. */
export function serviceParameter(auth: PublicAuth): ServiceParameter | undefined {
  return auth.type === 'api_key' ? { in: auth.in, name: auth.name } : undefined;
}

/**
 * Validates, compiles (on the compiler's worker thread) and stores an app registration, create or
 * replace; the secret is sealed first. Refused with issues pointing into the registration.
 */
export async function putApp(
  prisma: PrismaClient,
  envelope: Envelope,
  compiler: DocumentCompiler,
  input: PutAppInput,
  now: Date,
): Promise<Result<PutAppValue, Issue[]>> {
  const { publicAuth, secret } = splitSecret(input.auth);
  const service = serviceParameter(publicAuth);
  const compiled = await compiler.compile(input.openapi, {
    ...(service ? { service } : {}),
    app: { appId: input.appId, provider: input.provider },
  });
  if (!compiled.ok) return err(compiled.error);
  const baseUrl = input.baseUrl ?? compiled.value.serverUrl;
  if (!baseUrl) {
    return err([
      {
        path: '/baseUrl',
        message: 'A base URL is required: the OpenAPI document has no absolute http(s) servers[0].url.',
      },
    ]);
  }
  const authSecret = secret === null ? null : await envelope.seal(secret, appSecretContext(input.appId));
  const data = {
    provider: input.provider,
    baseUrl: input.baseUrl ?? null,
    // Kept as text: the tools (their order, the media types picked) come out of the stored document
    // exactly as they came out of the registration.
    openapi: compiled.value.documentText,
    catalog: compiled.value.catalogText,
    search: compiled.value.searchText,
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
  return ok({ appId: input.appId, tools: compiled.value.tools, skipped: compiled.value.skipped });
}

export async function deleteApp(prisma: PrismaClient, appId: string): Promise<boolean> {
  const { count } = await prisma.app.deleteMany({ where: { id: appId } });
  return count > 0;
}

export function appView(app: {
  appId: string;
  provider: string;
  baseUrl: string;
  auth: PublicAuth;
  tools: string[];
  skipped: SkippedOperation[];
  updatedAt: Date;
}): AppView {
  return { ...app, updatedAt: app.updatedAt.toISOString() };
}
