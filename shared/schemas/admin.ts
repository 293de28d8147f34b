import { z } from 'zod';

/** Bodies of the admin procedures (CONTRACT.md §5). */

export const clientIdSchema = z.string().min(1).max(128);

export const createClientInput = z.object({ name: z.string().trim().min(1).max(200) });
export const clientSchema = z.object({ clientId: z.string(), name: z.string(), createdAt: z.string() });
export const listClientsOutput = z.object({ clients: z.array(clientSchema) });

/** An absolute http(s) URL without a fragment, compared later by exact string. */
export const redirectUriSchema = z
  .string()
  .min(1)
  .max(2048)
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === 'http:' || url.protocol === 'https:') && !value.includes('#');
    } catch {
      return false;
    }
  }, 'must be an absolute http(s) URL without a fragment');

export const addRedirectUriInput = z.object({ clientId: clientIdSchema, uri: redirectUriSchema });
export const redirectUriOutput = z.object({ clientId: z.string(), uri: z.string() });
export const listRedirectUrisInput = z.object({ clientId: clientIdSchema });
export const listRedirectUrisOutput = z.object({ uris: z.array(z.string()) });
export const removeRedirectUriInput = z.object({
  clientId: clientIdSchema,
  uri: z.string().min(1).max(2048),
});

export const createApiKeyInput = z.object({
  clientId: clientIdSchema,
  name: z.string().trim().min(1).max(200).optional(),
  scopes: z.array(z.string().min(1).max(200)).min(1).max(64),
});
export const createApiKeyOutput = z.object({
  keyId: z.string(),
  apiKey: z.string(),
  scopes: z.array(z.string()),
});
export const revokeApiKeyInput = z.object({ keyId: z.string().min(1).max(128) });

export const okOutput = z.object({ ok: z.literal(true) });
