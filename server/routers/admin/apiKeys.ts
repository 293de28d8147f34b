import { apiError } from '../../../shared/errors.ts';
import {
  createApiKeyInput,
  createApiKeyOutput,
  listApiKeysInput,
  listApiKeysOutput,
  okOutput,
  revokeApiKeyInput,
} from '../../../shared/schemas/admin.ts';
import { createApiKey, listApiKeys, revokeApiKey } from '../../admin/api-keys.ts';
import { SCOPE_FORMS } from '../../auth/scopes.ts';
import { ApiProblem } from '../../errors.ts';
import { recordChange } from '../../observe/audit.ts';
import { ADMIN_ERRORS, adminProcedure, router } from '../../trpc.ts';

export const apiKeysRouter = router({
  create: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/admin/clients/{clientId}/api-keys',
        tags: ['admin'],
        summary: 'Issue an API key to a client (the key is shown this once)',
        protect: true,
      },
      errors: [...ADMIN_ERRORS, 'not_found'],
      example: {
        name: 'prod',
        scopes: ['tools:execute', 'oauth:initiate', 'connections:read', 'connections:write'],
      },
    })
    .input(createApiKeyInput)
    .output(createApiKeyOutput)
    .mutation(async ({ ctx, input }) => {
      const outcome = await createApiKey(ctx.deps.db.prisma, input, new Date(ctx.deps.clock.now()));
      if (outcome.ok) {
        const { keyId, scopes } = outcome.value;
        // The key itself never: its id, client, name and scopes.
        await recordChange(ctx.deps, ctx.principal, 'api_key.created', keyId, {
          clientId: input.clientId,
          name: input.name ?? null,
          scopes,
        });
        return outcome.value;
      }
      const failure = outcome.error;
      if (failure.kind === 'client_not_found')
        throw new ApiProblem(apiError('not_found', 'No client has this id.'));
      throw new ApiProblem(
        apiError('invalid_request', 'Some scopes are not known.', {
          issues: failure.scopes.map(({ index, scope }) => ({
            path: `/scopes/${index}`,
            message: `Unknown scope "${scope}"; the scopes are ${SCOPE_FORMS.join(', ')}.`,
          })),
        }),
      );
    }),

  list: adminProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/admin/clients/{clientId}/api-keys',
        tags: ['admin'],
        summary:
          "List a client's API keys (never a key or its hash), revoked ones with their revocation time",
        protect: true,
      },
      errors: [...ADMIN_ERRORS, 'not_found'],
    })
    .input(listApiKeysInput)
    .output(listApiKeysOutput)
    .query(async ({ ctx, input }) => {
      const outcome = await listApiKeys(ctx.deps.db.prisma, input.clientId);
      if (!outcome.ok) throw new ApiProblem(apiError('not_found', 'No client has this id.'));
      return { keys: outcome.value };
    }),

  revoke: adminProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/admin/api-keys/{keyId}',
        tags: ['admin'],
        summary: 'Revoke an API key (every server stops accepting it within 5 s)',
        protect: true,
      },
      errors: [...ADMIN_ERRORS, 'not_found'],
    })
    .input(revokeApiKeyInput)
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      if (!(await revokeApiKey(ctx.deps.db.prisma, input.keyId, new Date(ctx.deps.clock.now())))) {
        throw new ApiProblem(apiError('not_found', 'No API key has this id.'));
      }
      ctx.deps.keys.evictKey(input.keyId);
      await recordChange(ctx.deps, ctx.principal, 'api_key.revoked', input.keyId);
      return { ok: true as const };
    }),
});
