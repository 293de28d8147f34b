import { z } from 'zod';
import { appIdSchema, NO_CONTROL_CHARACTERS, plainString, userIdSchema } from '../ids.ts';
import { connectionSchema } from './oauth.ts';

/** Bodies of the admin procedures (docs/reference.md "Administration"). */

export const clientIdSchema = plainString().min(1).max(128);

export const createClientInput = z.object({ name: plainString().trim().min(1).max(200) });
export const clientSchema = z.object({ clientId: z.string(), name: z.string(), createdAt: z.string() });
export type ClientView = z.infer<typeof clientSchema>;
export const listClientsOutput = z.object({ clients: z.array(clientSchema) });

/**
 * Why a redirect URI cannot be registered (docs/reference.md "Administration"), or null. The callback later sends the
 * browser there by exact string, so the string itself must be safe as a Location: an absolute
 * http(s) URL with a host, no userinfo (`https://good@evil`), no fragment, no control characters
 * (reported by the schema's own check).
 */
export function redirectUriProblem(value: string): string | null {
  if (!NO_CONTROL_CHARACTERS.test(value)) return null;
  const scheme = /^https?:\/\//i.exec(value);
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {}
  if (!scheme || !url?.hostname) return 'must be an absolute http(s) URL';
  if (value.includes('#')) return 'must not contain a fragment';
  const authority = value.slice(scheme[0].length).split(/[/?\\]/, 1)[0] ?? '';
  if (authority.includes('@') || url.username || url.password) return 'must not contain userinfo';
  return null;
}

/** An absolute http(s) URL, compared later by exact string. */
export const redirectUriSchema = plainString()
  .min(1)
  .max(2048)
  .superRefine((value, ctx) => {
    const problem = redirectUriProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

export const addRedirectUriInput = z.object({ clientId: clientIdSchema, uri: redirectUriSchema });
export const redirectUriOutput = z.object({ clientId: z.string(), uri: z.string() });
export const listRedirectUrisInput = z.object({ clientId: clientIdSchema });
export const listRedirectUrisOutput = z.object({ uris: z.array(z.string()) });
export const removeRedirectUriInput = z.object({
  clientId: clientIdSchema,
  uri: plainString().min(1).max(2048),
});

export const createApiKeyInput = z.object({
  clientId: clientIdSchema,
  name: plainString().trim().min(1).max(200).optional(),
  scopes: z.array(plainString().min(1).max(200)).min(1).max(64),
});
export const createApiKeyOutput = z.object({
  keyId: z.string(),
  apiKey: z.string(),
  scopes: z.array(z.string()),
});
export const revokeApiKeyInput = z.object({ keyId: plainString().min(1).max(128) });
export const listApiKeysInput = z.object({ clientId: clientIdSchema });
/** A key as an admin sees it: never the key, its hash or its prefix. */
export const apiKeySchema = z.object({
  keyId: z.string(),
  name: z.string().nullable(),
  scopes: z.array(z.string()),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
});
export type ApiKeyView = z.infer<typeof apiKeySchema>;
export const listApiKeysOutput = z.object({ keys: z.array(apiKeySchema) });

export const okOutput = z.object({ ok: z.literal(true) });

/** GET /admin/connections (the web console's "connections by user"): every client's users' grants. */
export const listAdminConnectionsInput = z.object({
  clientId: clientIdSchema.optional(),
  userId: userIdSchema.optional(),
  appId: appIdSchema.optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  /** The previous page's `next_cursor`. */
  cursor: plainString().min(1).max(2000).optional(),
});
export type ListAdminConnectionsInput = z.infer<typeof listAdminConnectionsInput>;
/** A grant as an admin sees it: whose it is, never a token. */
export const adminConnectionSchema = connectionSchema.extend({ clientId: z.string(), userId: z.string() });
export type AdminConnectionView = z.infer<typeof adminConnectionSchema>;
export const listAdminConnectionsOutput = z.object({
  connections: z.array(adminConnectionSchema),
  /** Present only when more connections follow. */
  next_cursor: z.string().optional(),
});
/** DELETE /admin/connections: one user's grant for one app, as DELETE /connections/{appId} forgets it. */
export const removeAdminConnectionInput = z.object({
  clientId: clientIdSchema,
  userId: userIdSchema,
  appId: appIdSchema,
});

/** GET /admin/calls/stats (the web console's overview): the last `minutes` minutes of the call log. */
export const callStatsInput = z.object({
  minutes: z.coerce.number().int().min(1).max(1440).default(60),
  clientId: clientIdSchema.optional(),
  appId: appIdSchema.optional(),
});
export const callStatsOutput = z.object({
  since: z.string(),
  until: z.string(),
  total: z.number().int().nonnegative(),
  /** Calls whose outcome is not `ok`. */
  errors: z.number().int().nonnegative(),
  p50Ms: z.number().nullable(),
  p99Ms: z.number().nullable(),
  /** Every minute of the window, oldest first: its calls by outcome (`ok` or an error code). */
  minutes: z.array(
    z.object({ at: z.string(), counts: z.record(z.string(), z.number().int().nonnegative()) }),
  ),
  /** The error outcomes, most frequent first (at most 8). */
  topErrors: z.array(z.object({ outcome: z.string(), count: z.number().int().nonnegative() })),
});
export type CallStats = z.infer<typeof callStatsOutput>;
