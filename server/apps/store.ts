/**
 * Storing an app registration, whatever it was registered from (an OpenAPI document, apps.ts, or
 * an MCP server, mcp-apps.ts): its public auth, its sealed secret, its catalog and its tools' rows.
 */
import { apiError, type ErrorBody, type Issue } from '../../shared/errors.ts';
import type { AppAuth, PublicAuth } from '../../shared/schemas/apps.ts';
import type { CompiledDocument } from '../catalog/catalog.ts';
import type { SkippedOperation } from '../catalog/types.ts';
import type { Prisma } from '../db/generated/client.ts';
import type { AppDeps } from '../deps.ts';
import { replaceToolRows, TOOL_ROWS_TIMEOUT_MS } from '../search/views.ts';
import { writeAppTexts } from './app-texts.ts';
import { appSecretContext } from './secrets.ts';

/** The registration's auth as stored (`publicAuth`) and its secret, sealed apart. */
export function splitSecret(auth: Exclude<AppAuth, { discover: true }>): {
  publicAuth: PublicAuth;
  secret: string | null;
} {
  switch (auth.type) {
    case 'none':
      return { publicAuth: auth, secret: null };
    case 'api_key': {
      const { value, ...rest } = auth;
      return { publicAuth: rest, secret: value };
    }
    case 'oauth2': {
      const { clientSecret, discover: _explicit, ...rest } = auth;
      return { publicAuth: rest, secret: clientSecret };
    }
  }
}

/** 400 invalid_request with the registration's issues. */
export function registrationProblem(issues: Issue[]): ErrorBody<'invalid_request'> {
  return apiError('invalid_request', 'The app registration has problems.', { issues });
}

export interface StoredAppInput {
  appId: string;
  provider: string;
  baseUrl: string | null;
  mcpUrl: string | null;
  publicAuth: PublicAuth;
  /** Plaintext, sealed here; null when the app has none. */
  secret: string | null;
  compiled: CompiledDocument;
  now: Date;
}

/**
 * What must commit with a stored app, in the same transaction (its audit event): given what the
 * registration answers. A throw rolls the app back.
 */
export type AlsoInTransaction = (tx: Prisma.TransactionClient, stored: PutAppValue) => Promise<void>;

/** Writes an app and its tools' rows together: a search never shows tools of another version. */
export async function storeApp(
  deps: AppDeps,
  app: StoredAppInput,
  also: AlsoInTransaction,
): Promise<PutAppValue> {
  const { prisma } = deps.db;
  const authSecret =
    app.secret === null ? null : await deps.envelope.seal(app.secret, appSecretContext(app.appId));
  const data = {
    provider: app.provider,
    baseUrl: app.baseUrl,
    mcpUrl: app.mcpUrl,
    authType: app.publicAuth.type,
    authConfig: app.publicAuth as Prisma.InputJsonValue,
    authSecret: authSecret === null ? null : new Uint8Array(authSecret),
    updatedAt: app.now,
  };
  const stored = { appId: app.appId, tools: app.compiled.tools, skipped: app.compiled.skipped };
  await prisma.$transaction(
    async (tx) => {
      // The large texts are written after, one statement each (writeAppTexts); the transaction
      // shows none of it to anyone before all of it is written.
      await tx.app.upsert({
        where: { id: app.appId },
        create: { id: app.appId, ...data, openapi: '', createdAt: app.now },
        update: data,
        select: { id: true },
      });
      await writeAppTexts(tx, app.appId, {
        // Kept as text: the tools (their order, the media types picked) come out of the stored
        // document exactly as they came out of the registration.
        openapi: app.compiled.documentText,
        catalog: app.compiled.catalogText,
        search: app.compiled.searchText,
      });
      await replaceToolRows(tx, app.appId, app.compiled.toolViews);
      await also(tx, stored);
    },
    { timeout: TOOL_ROWS_TIMEOUT_MS },
  );
  return stored;
}

/** What a registration answers (docs/reference.md "Administration"). */
export interface PutAppValue {
  appId: string;
  tools: string[];
  skipped: SkippedOperation[];
}
