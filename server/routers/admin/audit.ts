import { z } from 'zod';
import { listAuditInput, listAuditOutput, verifyAuditOutput } from '../../../shared/schemas/observe.ts';
import { ApiProblem } from '../../errors.ts';
import { auditPage, verifyAudit } from '../../observe/audit-query.ts';
import { ADMIN_ERRORS, adminProcedure, router } from '../../trpc.ts';

export const auditRouter = router({
  list: adminProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/admin/audit',
        tags: ['admin'],
        summary: 'The audit trail: every administrative and connection change, newest first',
        description:
          'Filters are exact matches; `since` is inclusive and `until` exclusive (RFC 3339). Pass ' +
          '`next_cursor` as `cursor` for the next, older page. Events are hash-chained: see /admin/audit/verify.',
        protect: true,
      },
      errors: ADMIN_ERRORS,
    })
    .input(listAuditInput)
    .output(listAuditOutput)
    .query(async ({ ctx, input }) => {
      const page = await auditPage(ctx.deps.db.prisma, input);
      if (!page.ok) throw new ApiProblem(page.error);
      return page.value;
    }),

  verify: adminProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/admin/audit/verify',
        tags: ['admin'],
        summary: 'Recompute the audit chain: ok, how many events were checked, the first bad one',
        protect: true,
      },
      errors: ADMIN_ERRORS,
    })
    .input(z.object({}))
    .output(verifyAuditOutput)
    .query(({ ctx }) => verifyAudit(ctx.deps.db.prisma)),
});
