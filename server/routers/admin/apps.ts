import { z } from 'zod';
import { apiError } from '../../../shared/errors.ts';
import { okOutput } from '../../../shared/schemas/admin.ts';
import {
  appIdInput,
  appSchema,
  listAppsOutput,
  putAppInput,
  putAppOutput,
} from '../../../shared/schemas/apps.ts';
import { appView, deleteApp, putApp } from '../../apps/apps.ts';
import { refreshMcpApp } from '../../apps/mcp-apps.ts';
import type { LoadedApp } from '../../apps/registry.ts';
import { ApiProblem } from '../../errors.ts';
import { auditConnection } from '../../oauth/grants.ts';
import { actorOf, appendEventIn, auditedChange } from '../../observe/audit.ts';
import { err, ok } from '../../result.ts';
import { ADMIN_ERRORS, adminProcedure, router } from '../../trpc.ts';

const view = (app: LoadedApp) =>
  appView({
    appId: app.appId,
    provider: app.provider,
    baseUrl: app.baseUrl,
    mcpUrl: app.mcpUrl,
    auth: app.auth,
    tools: [...app.compiled.tools.keys()],
    skipped: app.compiled.skipped,
    updatedAt: app.updatedAt,
  });

/** The request body /openapi.json shows for PUT /admin/apps/{appId}. */
const PUT_APP_EXAMPLE = {
  provider: 'example.pets',
  baseUrl: 'http://127.0.0.1:4010',
  openapi: {
    openapi: '3.0.3',
    info: { title: 'Pets', version: '1' },
    paths: {
      '/pets/{petId}': {
        get: {
          operationId: 'getPetById',
          parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'integer' } }],
          responses: { '200': { description: 'A pet' } },
        },
      },
    },
  },
  auth: { type: 'none' },
};

const appNotFound = (appId: string) =>
  new ApiProblem(apiError('app_not_found', `No app ${appId} is registered.`, { app_id: appId }));

export const appsRouter = router({
  put: adminProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/admin/apps/{appId}',
        tags: ['admin'],
        summary: 'Register or replace an app from its OpenAPI document or an MCP server',
        protect: true,
      },
      errors: ADMIN_ERRORS,
      // An app registration carries a whole OpenAPI document (GitHub's is 11 MB).
      bodyLimit: 'document',
      example: PUT_APP_EXAMPLE,
    })
    .input(putAppInput)
    .output(putAppOutput)
    .mutation(async ({ ctx, input }) => {
      const outcome = await putApp(
        ctx.deps,
        input,
        new Date(ctx.deps.clock.now()),
        (tx, stored) =>
          appendEventIn(tx, ctx.deps, ctx.principal, {
            action: 'app.registered',
            target: input.appId,
            details: {
              provider: input.provider,
              ...(input.mcp ? { mcp: input.mcp.url } : {}),
              tools: stored.tools.length,
              skipped: stored.skipped.length,
            },
          }),
        ctx.document,
      );
      ctx.deps.apps.invalidate(input.appId);
      if (!outcome.ok) throw new ApiProblem(outcome.error);
      return outcome.value;
    }),

  refresh: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/admin/apps/{appId}/refresh',
        tags: ['admin'],
        summary: "Read an MCP-server app's tools again",
        protect: true,
      },
      errors: [...ADMIN_ERRORS, 'app_not_found', 'upstream_unreachable', 'upstream_too_large'],
    })
    .input(appIdInput)
    .output(putAppOutput)
    .mutation(async ({ ctx, input }) => {
      const outcome = await refreshMcpApp(
        ctx.deps,
        input.appId,
        new Date(ctx.deps.clock.now()),
        (tx, stored) =>
          appendEventIn(tx, ctx.deps, ctx.principal, {
            action: 'app.refreshed',
            target: input.appId,
            details: { tools: stored.tools.length, skipped: stored.skipped.length },
          }),
      );
      if (!outcome.ok) throw new ApiProblem(outcome.error);
      return outcome.value;
    }),

  list: adminProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/admin/apps',
        tags: ['admin'],
        summary: 'List registered apps',
        protect: true,
      },
      errors: ADMIN_ERRORS,
    })
    .input(z.object({}))
    .output(listAppsOutput)
    .query(async ({ ctx }) => ({ apps: (await ctx.deps.apps.list()).map(view) })),

  get: adminProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/admin/apps/{appId}',
        tags: ['admin'],
        summary: 'Read one app',
        protect: true,
      },
      errors: [...ADMIN_ERRORS, 'app_not_found'],
    })
    .input(appIdInput)
    .output(appSchema)
    .query(async ({ ctx, input }) => {
      const app = await ctx.deps.apps.get(input.appId);
      if (!app) throw appNotFound(input.appId);
      return view(app);
    }),

  remove: adminProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/admin/apps/{appId}',
        tags: ['admin'],
        summary: 'Delete an app and its grants',
        protect: true,
      },
      errors: [...ADMIN_ERRORS, 'app_not_found'],
    })
    .input(appIdInput)
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      const deleted = await auditedChange(
        ctx.deps,
        ctx.principal,
        async (tx) => {
          const deleted = await deleteApp(tx, input.appId);
          if (!deleted) return err('app_not_found');
          // Each connection the app took with it is a connection change of its own.
          for (const { id, clientId, userId } of deleted.connections)
            await auditConnection(
              tx,
              ctx.deps.clock,
              actorOf(ctx.principal),
              'connection.deleted',
              id,
              { clientId, userId, appId: input.appId },
              { appDeleted: true },
            );
          return ok(input.appId);
        },
        (appId) => ({ action: 'app.deleted', target: appId }),
      );
      ctx.deps.apps.invalidate(input.appId);
      if (!deleted.ok) throw appNotFound(input.appId);
      return { ok: true as const };
    }),
});
