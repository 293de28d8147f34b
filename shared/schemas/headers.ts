import { z } from 'zod';
import { userIdSchema } from '../ids.ts';

/** The contract's request headers as schemas, so /openapi.json documents them on each route. */

const clientId = z
  .string()
  .meta({ description: 'Public client id; the API key must belong to this client.' });
const userId = userIdSchema.meta({ description: 'End-user id chosen by the caller, scoped per client.' });

export const agentHeaders = z.object({ 'x-service-client-id': clientId });

export const userHeaders = z.object({ 'x-service-client-id': clientId, 'x-service-user-id': userId });

export const proxyHeaders = z.object({
  'x-service-client-id': clientId,
  'x-service-user-id': userId
    .optional()
    .meta({ description: 'End-user id; required by tools of oauth2 apps.' }),
  'x-service-app-id': z
    .string()
    .optional()
    .meta({ description: 'App id, needed only when toolId is not composite.' }),
  'x-service-idempotency-key': z
    .string()
    .min(1)
    .max(255)
    .optional()
    .meta({ description: '1–255 printable ASCII characters; deduplicates retries for 24 hours.' }),
});
