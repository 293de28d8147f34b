import { z } from 'zod';
import { appIdSchema, PROVIDER_PATTERN, plainString } from '../ids.ts';

/** App registration (docs/reference.md "Administration"). Secrets (`value`, `clientSecret`) are write-only. */

// z.url() drops CR, LF and tab silently (WHATWG parsing): refuse them before it sees the string.
const httpUrl = plainString().pipe(z.url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' }));
const HEADER_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export const noneAuthSchema = z.object({ type: z.literal('none') });

export const apiKeyAuthSchema = z.object({
  type: z.literal('api_key'),
  in: z.enum(['header', 'query']),
  name: z.string().min(1).max(256).regex(HEADER_TOKEN, 'must be a valid header or query name'),
  value: plainString().min(1).max(8192),
});

export const oauth2AuthSchema = z.object({
  type: z.literal('oauth2'),
  authorizationUrl: httpUrl,
  tokenUrl: httpUrl,
  revocationUrl: httpUrl.optional(),
  clientId: plainString().min(1).max(1024),
  clientSecret: plainString().min(1).max(8192),
  scopes: z.array(plainString().min(1).max(512)).max(256),
  tokenAuthMethod: z.enum(['client_secret_basic', 'client_secret_post']).default('client_secret_basic'),
  extraAuthParams: z.record(plainString(), plainString()).optional(),
  /** The authorization server's issuer identifier: every callback must then carry it as `iss` (RFC 9207). */
  issuer: httpUrl.optional(),
  discover: z.literal(false).optional(),
});

/**
 * oauth2 of an MCP server whose endpoints toolgate finds itself (docs/reference.md "Apps from MCP
 * servers"): the server's protected-resource metadata names the authorization server, whose
 * metadata names the endpoints; toolgate registers itself there.
 */
export const oauth2DiscoverSchema = z.object({
  type: z.literal('oauth2'),
  discover: z.literal(true),
  scopes: z.array(plainString().min(1).max(512)).max(256).optional(),
});

/** What a registration's oauth2 block becomes once stored: explicit endpoints, found or given. */
export const storedOAuth2Schema = oauth2AuthSchema.omit({ clientSecret: true, discover: true }).extend({
  /** `none`: a public client (toolgate's Client ID Metadata Document, or a registration without secret). */
  tokenAuthMethod: z
    .enum(['client_secret_basic', 'client_secret_post', 'none'])
    .default('client_secret_basic'),
  /** The endpoints were discovered from the MCP server (docs/reference.md "Apps from MCP servers"). */
  discover: z.literal(true).optional(),
  /** RFC 8707 `resource` sent in authorization and token requests: the MCP server's URL. */
  resource: httpUrl.optional(),
});

export const appAuthSchema = z.discriminatedUnion('type', [
  noneAuthSchema,
  apiKeyAuthSchema,
  z.discriminatedUnion('discover', [oauth2AuthSchema, oauth2DiscoverSchema]),
]);
export type AppAuth = z.infer<typeof appAuthSchema>;

export const putAppInput = z
  .object({
    appId: appIdSchema,
    provider: z
      .string()
      .max(128)
      .regex(PROVIDER_PATTERN, 'must be <vendor>.<product>, lowercase, e.g. github.rest'),
    baseUrl: httpUrl.optional(),
    /** An OpenAPI (or Swagger 2.0) document; or, instead, `mcp`. */
    openapi: z.union([z.record(z.string(), z.unknown()), z.string().min(1)]).optional(),
    /** A remote MCP server (Streamable HTTP) whose tools become the app's (docs/reference.md "Apps from MCP servers"). */
    mcp: z.object({ url: httpUrl }).optional(),
    auth: appAuthSchema,
  })
  // Checked even when other fields are wrong, so a body missing both names every problem at once.
  .refine((registration) => registration.openapi !== undefined || registration.mcp !== undefined, {
    path: ['openapi'],
    message: 'Required value is missing: an OpenAPI document (openapi), or an MCP server (mcp).',
    when: (payload) => typeof payload.value === 'object' && payload.value !== null,
  });
export type PutAppInput = z.infer<typeof putAppInput>;

/** An operation of the document that is not a tool, and why (docs/reference.md "Administration"). */
export const skippedOperationSchema = z.object({
  method: z.string(),
  path: z.string(),
  operationId: z.string().optional(),
  reason: z.string(),
});
export type SkippedOperationView = z.infer<typeof skippedOperationSchema>;

export const putAppOutput = z.object({
  appId: z.string(),
  tools: z.array(z.string()),
  skipped: z.array(skippedOperationSchema),
});

/** `auth` as shown back: every secret stripped. */
export const publicAuthSchema = z.discriminatedUnion('type', [
  noneAuthSchema,
  apiKeyAuthSchema.omit({ value: true }),
  storedOAuth2Schema,
]);
export type PublicAuth = z.infer<typeof publicAuthSchema>;

export const appSchema = z.object({
  appId: z.string(),
  provider: z.string(),
  /** The upstream's base URL; for an app from an MCP server, the server's URL. */
  baseUrl: z.string(),
  /** Present for an app from an MCP server. */
  mcp: z.object({ url: z.string() }).optional(),
  auth: publicAuthSchema,
  tools: z.array(z.string()),
  /** Beyond the contract's App: the operations left out, so an admin sees what is missing. */
  skipped: z.array(skippedOperationSchema),
  updatedAt: z.string(),
});
export type AppView = z.infer<typeof appSchema>;

export const appIdInput = z.object({ appId: appIdSchema });
export const listAppsOutput = z.object({ apps: z.array(appSchema) });
