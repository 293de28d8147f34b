import type { ErrorBody } from '../../shared/errors.ts';
import type { AppView, PublicAuth, PutAppInput } from '../../shared/schemas/apps.ts';
import type { ReadBody } from '../catalog/compiler.ts';
import type { SkippedOperation } from '../catalog/types.ts';
import type { Prisma } from '../db/generated/client.ts';
import type { AppDeps } from '../deps.ts';
import { err, ok, type Result } from '../result.ts';
import { putMcpApp } from './mcp-apps.ts';
import { serviceParameter } from './secrets.ts';
import {
  type AlsoInTransaction,
  type PutAppValue,
  registrationProblem,
  splitSecret,
  storeApp,
} from './store.ts';

export { appSecretContext, serviceParameter } from './secrets.ts';
export type { AlsoInTransaction, PutAppValue } from './store.ts';

/**
 * Validates, compiles (on the compiler's worker thread) and stores an app registration, create or
 * replace; the secret is sealed first. Refused with issues pointing into the registration. An app
 * from an MCP server (`mcp`) is read from the server first (mcp-apps.ts). `also` commits with the
 * stored app (its audit event). `document`: the body was read on the compile worker, and
 * `input.openapi` stands in for the document it holds.
 */
export async function putApp(
  deps: AppDeps,
  input: PutAppInput,
  now: Date,
  also: AlsoInTransaction,
  document?: ReadBody,
): Promise<Result<PutAppValue, ErrorBody>> {
  if (input.mcp) return putMcpApp(deps, input, input.mcp.url, now, also);
  if (input.openapi === undefined) {
    return err(
      registrationProblem([
        {
          path: '/openapi',
          message: 'Required value is missing: an OpenAPI document (openapi), or an MCP server (mcp).',
        },
      ]),
    );
  }
  if (input.auth.type === 'oauth2' && input.auth.discover === true) {
    return err(
      registrationProblem([
        {
          path: '/auth/discover',
          message: 'Discovery is for apps from MCP servers; an OpenAPI app names its OAuth endpoints.',
        },
      ]),
    );
  }
  const { publicAuth, secret } = splitSecret(input.auth);
  const service = serviceParameter(publicAuth);
  const compiled = await deps.apps.compiler.compile(document ?? input.openapi, {
    ...(service ? { service } : {}),
    app: { appId: input.appId, provider: input.provider },
  });
  if (!compiled.ok) return err(registrationProblem(compiled.error));
  const baseUrl = input.baseUrl ?? compiled.value.serverUrl;
  if (!baseUrl) {
    return err(
      registrationProblem([
        {
          path: '/baseUrl',
          message: 'A base URL is required: the OpenAPI document has no absolute http(s) servers[0].url.',
        },
      ]),
    );
  }
  const stored = await storeApp(
    deps,
    {
      appId: input.appId,
      provider: input.provider,
      baseUrl: input.baseUrl ?? null,
      mcpUrl: null,
      publicAuth,
      secret,
      compiled: compiled.value,
      now,
    },
    also,
  );
  return ok(stored);
}

/** A user's connection to an app, as an app's deletion takes it along. */
export interface DeletedConnection {
  id: string;
  clientId: string;
  userId: string;
}

/**
 * Deletes an app and, with it (the foreign key cascades), its users' connections, which it
 * answers so each can be audited; null when there is no such app. The app's row is locked first:
 * a grant being stored meanwhile waits for this transaction and then finds no app, so no
 * connection goes unanswered.
 */
export async function deleteApp(
  prisma: Prisma.TransactionClient,
  appId: string,
): Promise<{ connections: DeletedConnection[] } | null> {
  const locked = await prisma.$queryRaw<unknown[]>`SELECT id FROM apps WHERE id = ${appId} FOR UPDATE`;
  if (locked.length === 0) return null;
  const connections = await prisma.connection.findMany({
    where: { appId },
    select: { id: true, clientId: true, userId: true },
    orderBy: { id: 'asc' },
  });
  await prisma.app.delete({ where: { id: appId } });
  return { connections };
}

export function appView(app: {
  appId: string;
  provider: string;
  baseUrl: string;
  mcpUrl: string | null;
  auth: PublicAuth;
  tools: string[];
  skipped: SkippedOperation[];
  updatedAt: Date;
}): AppView {
  const { mcpUrl, ...rest } = app;
  return {
    ...rest,
    ...(mcpUrl !== null ? { mcp: { url: mcpUrl } } : {}),
    updatedAt: app.updatedAt.toISOString(),
  };
}
