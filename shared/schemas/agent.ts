import { z } from 'zod';
import { appIdSchema, ID_PATTERN, plainString } from '../ids.ts';

/** Bodies of the agent endpoints (docs/reference.md "Agent endpoints"). */

export const proxyInput = z.object({
  toolId: plainString().min(1).max(400),
  parameters: z.record(z.string(), z.unknown()),
});
export type ProxyInput = z.infer<typeof proxyInput>;

export const proxyOutput = z.object({
  ok: z.literal(true),
  data: z.unknown(),
  meta: z.object({ tool_id: z.string(), duration_ms: z.number().int().nonnegative(), provider: z.string() }),
});
export type ProxySuccess = z.infer<typeof proxyOutput>;

export const toolSchema = z.object({
  toolId: z.string(),
  appId: z.string(),
  name: z.string(),
  /** The operation's summary, else the tool's name. */
  title: z.string(),
  /** The operation's method and path as the document writes them. */
  method: z.string(),
  path: z.string(),
  description: z.string(),
  parameters: z.record(z.string(), z.unknown()),
  requiresUserAuth: z.boolean(),
  scopes: z.array(z.string()),
  /** Relevance to `q`, in (0, 1]; present only when `q` is given (docs/reference.md "Tool search"). */
  score: z.number().optional(),
});
export type ToolView = z.infer<typeof toolSchema>;

/** GET /tools query (docs/reference.md "Agent endpoints"): all optional; `limit` arrives as text over REST. */
export const listToolsInput = z.object({
  /** An id that no app can have is a mistake, refused as /connections?appId= and /mcp?apps= refuse it. */
  appId: appIdSchema.optional(),
  /** Comma-separated app ids: only these apps' tools. */
  apps: plainString()
    .min(1)
    .max(10_000)
    .refine(
      (text) => text.split(',').every((id) => ID_PATTERN.test(id.trim())),
      'must be comma-separated app ids',
    )
    .optional(),
  /** A task in free text: the tools are ranked by relevance to it (docs/reference.md "Tool search"). */
  q: plainString().max(20_000).optional(),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  /** The previous page's `next_cursor`. */
  cursor: plainString().min(1).max(1000).optional(),
});
export const listToolsOutput = z.object({
  tools: z.array(toolSchema),
  /** Present only when more tools follow. */
  next_cursor: z.string().optional(),
});
