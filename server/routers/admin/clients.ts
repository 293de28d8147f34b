import { z } from 'zod';
import { clientSchema, createClientInput, listClientsOutput } from '../../../shared/schemas/admin.ts';
import { createClient, listClients } from '../../admin/clients.ts';
import { recordChange } from '../../observe/audit.ts';
import { ADMIN_ERRORS, adminProcedure, router } from '../../trpc.ts';

export const clientsRouter = router({
  create: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/admin/clients',
        tags: ['admin'],
        summary: 'Register an AI client',
        protect: true,
      },
      errors: ADMIN_ERRORS,
      example: { name: 'my agent' },
    })
    .input(createClientInput)
    .output(clientSchema)
    .mutation(async ({ ctx, input }) => {
      const client = await createClient(ctx.deps.db.prisma, input.name, new Date(ctx.deps.clock.now()));
      await recordChange(ctx.deps, ctx.principal, 'client.created', client.clientId, { name: client.name });
      return client;
    }),

  list: adminProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/admin/clients',
        tags: ['admin'],
        summary: 'List AI clients',
        protect: true,
      },
      errors: ADMIN_ERRORS,
    })
    .input(z.object({}))
    .output(listClientsOutput)
    .query(async ({ ctx }) => ({ clients: await listClients(ctx.deps.db.prisma) })),
});
