import { z } from 'zod';
import { plainString } from '../ids.ts';

/** Bodies of the agent endpoints (docs/reference.md "Agent endpoints"). */

export const proxyInput = z.object({
  toolId: plainString().min(1).max(400),
  parameters: z.record(z.string(), z.unknown()),
});
export type ProxyInput = z.infer<typeof proxyInput>;

export const proxyOutput = z.object({
  ok: z.literal(true),
  data: z.unknown(),
  meta: z.object({ tool_id: z.string(), duration_ms: z.number().int(), provider: z.string() }),
});
export type ProxySuccess = z.infer<typeof proxyOutput>;

export const toolSchema = z.object({
  toolId: z.string(),
  appId: z.string(),
  name: z.string(),
  description: z.string(),
  parameters: z.record(z.string(), z.unknown()),
  requiresUserAuth: z.boolean(),
  scopes: z.array(z.string()),
  // Optional until the ranked search serves them (docs/reference.md "Finding the right tool").
  title: z.string().optional(),
  method: z.string().optional(),
  path: z.string().optional(),
  score: z.number().optional(),
});
export type ToolView = z.infer<typeof toolSchema>;

/** GET /tools query (docs/reference.md "Agent endpoints"): all optional; `limit` arrives as text over REST. */
export const listToolsInput = z.object({
  appId: plainString().min(1).max(128).optional(),
  /** Words that must all occur, case-insensitively, in a tool's name, summary or description. */
  q: plainString().max(1000).optional(),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  /** The previous page's `next_cursor`. */
  cursor: plainString().min(1).max(1000).optional(),
});
export const listToolsOutput = z.object({
  tools: z.array(toolSchema),
  /** Present only when more tools follow. */
  next_cursor: z.string().optional(),
});
