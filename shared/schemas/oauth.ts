import { z } from 'zod';
import { appIdSchema, plainString, userIdSchema } from '../ids.ts';

/** Bodies of end-user OAuth and connections (docs/reference.md "Agent endpoints", §3). */

export const initiateOAuthInput = z.object({
  appId: appIdSchema,
  userId: userIdSchema,
  // Compared by exact string with the client's registered URIs; anything else is a mismatch.
  clientRedirectUri: plainString().min(1).max(2048),
});
export type InitiateOAuthInput = z.infer<typeof initiateOAuthInput>;

export const initiateOAuthOutput = z.object({
  authorizationUrl: z.string(),
  state: z.string(),
  expires_at: z.string(),
});
export type InitiateOAuthAnswer = z.infer<typeof initiateOAuthOutput>;

export const connectionStatusSchema = z.enum(['active', 'reauth_required']);
export type ConnectionStatus = z.infer<typeof connectionStatusSchema>;

export const connectionSchema = z.object({
  appId: z.string(),
  status: connectionStatusSchema,
  scopes: z.array(z.string()),
  expiresAt: z.string().nullable(),
  updatedAt: z.string(),
});
export type ConnectionView = z.infer<typeof connectionSchema>;

export const listConnectionsInput = z.object({ appId: appIdSchema.optional() });
export const listConnectionsOutput = z.object({ connections: z.array(connectionSchema) });
export const deleteConnectionInput = z.object({ appId: appIdSchema });
