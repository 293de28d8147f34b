import { apiError } from '../../../shared/errors.ts';
import {
  createApiKeyInput,
  createApiKeyOutput,
  listApiKeysInput,
  listApiKeysOutput,
  okOutput,
  revokeApiKeyInput,
} from '../../../shared/schemas/admin.ts';
import { listApiKeys, prepareApiKey, revokeApiKey, storeApiKey } from '../../admin/api-keys.ts';
import { SCOPE_FORMS } from '../../auth/scopes.ts';
import { ApiProblem } from '../../errors.ts';
import { auditedChange } from '../../observe/audit.ts';
import { err, ok } from '../../result.ts';
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
      const prepared = await prepareApiKey(input, new Date(ctx.deps.clock.now()));
      if (!prepared.ok) {
        throw new ApiProblem(
          apiError('invalid_request', 'Some scopes are not known.', {
            issues: prepared.error.scopes.map(({ index, scope }) => ({
              path: `/scopes/${index}`,
              message: `Unknown scope "${scope}"; the scopes are ${SCOPE_FORMS.join(', ')}.`,
            })),
          }),
        );
      }
      const stored = await auditedChange(
        ctx.deps,
        ctx.principal,
        (tx) => storeApiKey(tx, prepared.value),
        // The key itself never: its id, client, name and scopes.
        ({ keyId, scopes }) => ({
          action: 'api_key.created',
          target: keyId,
          details: { clientId: input.clientId, name: input.name ?? null, scopes },
        }),
      );
      if (!stored.ok) throw new ApiProblem(apiError('not_found', 'No client has this id.'));
      return stored.value;
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
      const now = new Date(ctx.deps.clock.now());
      const revoked = await auditedChange(
        ctx.deps,
        ctx.principal,
        async (tx) => ((await revokeApiKey(tx, input.keyId, now)) ? ok(input.keyId) : err('not_found')),
        (keyId) => ({ action: 'api_key.revoked', target: keyId }),
      );
      if (!revoked.ok) throw new ApiProblem(apiError('not_found', 'No API key has this id.'));
      // After the commit: a rolled-back revocation leaves the key valid, cached or not.
      ctx.deps.keys.evictKey(input.keyId);
      return { ok: true as const };
    }),
});
