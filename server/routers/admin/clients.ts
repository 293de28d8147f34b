import { z } from 'zod';
import { clientSchema, createClientInput, listClientsOutput } from '../../../shared/schemas/admin.ts';
import { createClient, listClients } from '../../admin/clients.ts';
import { auditedChange } from '../../observe/audit.ts';
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
      const now = new Date(ctx.deps.clock.now());
      const created = await auditedChange(
        ctx.deps,
        ctx.principal,
        (tx) => createClient(tx, input.name, now),
        (client) => ({ action: 'client.created', target: client.clientId, details: { name: client.name } }),
      );
      // The error is `never`: createClient fails only by throwing (a 500, nothing kept).
      return created.ok ? created.value : created.error;
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
