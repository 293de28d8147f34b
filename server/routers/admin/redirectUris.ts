import { apiError } from '../../../shared/errors.ts';
import {
  addRedirectUriInput,
  listRedirectUrisInput,
  listRedirectUrisOutput,
  okOutput,
  redirectUriOutput,
  removeRedirectUriInput,
} from '../../../shared/schemas/admin.ts';
import { addRedirectUri, listRedirectUris, removeRedirectUri } from '../../admin/redirect-uris.ts';
import { ApiProblem } from '../../errors.ts';
import { auditedChange } from '../../observe/audit.ts';
import { ADMIN_ERRORS, adminProcedure, router } from '../../trpc.ts';

const PATH = '/admin/clients/{clientId}/redirect-uris';

function notFound(error: 'client_not_found' | 'uri_not_found'): never {
  throw new ApiProblem(
    apiError(
      'not_found',
      error === 'client_not_found' ? 'No client has this id.' : 'This URI is not registered on the client.',
    ),
  );
}

export const redirectUrisRouter = router({
  add: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: PATH,
        tags: ['admin'],
        summary: 'Register a redirect URI',
        protect: true,
      },
      errors: [...ADMIN_ERRORS, 'not_found'],
      example: { uri: 'https://agent.example/oauth/done' },
    })
    .input(addRedirectUriInput)
    .output(redirectUriOutput)
    .mutation(async ({ ctx, input }) => {
      const now = new Date(ctx.deps.clock.now());
      const outcome = await auditedChange(
        ctx.deps,
        ctx.principal,
        (tx) => addRedirectUri(tx, input.clientId, input.uri, now),
        () => ({ action: 'redirect_uri.added', target: input.clientId, details: { uri: input.uri } }),
      );
      return outcome.ok ? outcome.value : notFound(outcome.error);
    }),

  list: adminProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: PATH,
        tags: ['admin'],
        summary: "List a client's redirect URIs",
        protect: true,
      },
      errors: [...ADMIN_ERRORS, 'not_found'],
    })
    .input(listRedirectUrisInput)
    .output(listRedirectUrisOutput)
    .query(async ({ ctx, input }) => {
      const outcome = await listRedirectUris(ctx.deps.db.prisma, input.clientId);
      return outcome.ok ? { uris: outcome.value } : notFound(outcome.error);
    }),

  remove: adminProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: PATH,
        tags: ['admin'],
        summary: 'Remove a redirect URI',
        protect: true,
      },
      errors: [...ADMIN_ERRORS, 'not_found'],
    })
    .input(removeRedirectUriInput)
    .output(okOutput)
    .mutation(async ({ ctx, input }) => {
      const outcome = await auditedChange(
        ctx.deps,
        ctx.principal,
        (tx) => removeRedirectUri(tx, input.clientId, input.uri),
        () => ({ action: 'redirect_uri.removed', target: input.clientId, details: { uri: input.uri } }),
      );
      return outcome.ok ? { ok: true as const } : notFound(outcome.error);
    }),
});
