import { z } from 'zod';
import { plainString } from '../ids.ts';

/** Bodies of the call log and audit trail procedures (docs/reference.md "Call log", "Audit trail"). */

/** RFC 3339 date-time with a zone (`2026-11-25T10:00:00Z`, `…+01:00`). */
const instant = z.iso.datetime({ offset: true, error: 'must be an RFC 3339 date-time with a zone' });
/** Page size: 100 unless said, at most 1000. Arrives as text over REST. */
const limit = z.coerce.number().int().min(1).max(1000).default(100);
const cursor = plainString().min(1).max(200);

export const listCallsInput = z.object({
  clientId: plainString().min(1).max(128).optional(),
  userId: plainString().min(1).max(256).optional(),
  appId: plainString().min(1).max(128).optional(),
  toolId: plainString().min(1).max(400).optional(),
  /** `ok` or a contract error code. */
  outcome: plainString().min(1).max(64).optional(),
  since: instant.optional(),
  until: instant.optional(),
  limit,
  /** The previous page's `next_cursor`. */
  cursor: cursor.optional(),
});
export type ListCallsInput = z.infer<typeof listCallsInput>;

export const callSchema = z.object({
  id: z.string(),
  /** When the call arrived (ISO 8601, UTC). */
  at: z.string(),
  durationMs: z.number().int().nonnegative(),
  surface: z.enum(['rest', 'trpc', 'mcp']),
  keyId: z.string().nullable(),
  clientId: z.string(),
  userId: z.string().nullable(),
  appId: z.string().nullable(),
  toolId: z.string().nullable(),
  /** `ok`, or the contract error code the call answered. */
  outcome: z.string(),
  /** The contract status of the outcome (200, or the error's), on every surface. */
  status: z.number().int().min(100).max(599),
  upstreamStatus: z.number().int().min(100).max(999).nullable(),
  idempotentReplay: z.boolean(),
  requestId: z.string(),
});
export type CallView = z.infer<typeof callSchema>;

export const listCallsOutput = z.object({
  calls: z.array(callSchema),
  /** Present only when older records follow. */
  next_cursor: z.string().optional(),
});
export type CallLogPage = z.infer<typeof listCallsOutput>;

export const listAuditInput = z.object({
  /** `client.created`, `api_key.revoked`, `connection.granted`… */
  action: plainString().min(1).max(64).optional(),
  /** An API key id, `system`, or `oidc:<sub>`. */
  actor: plainString().min(1).max(300).optional(),
  since: instant.optional(),
  until: instant.optional(),
  limit,
  cursor: cursor.optional(),
});
export type ListAuditInput = z.infer<typeof listAuditInput>;

export const auditEventSchema = z.object({
  /** The event's place in the chain (decimal digits, from 1). */
  id: z.string(),
  at: z.string(),
  actor: z.string(),
  action: z.string(),
  target: z.string(),
  details: z.record(z.string(), z.unknown()),
  /** Hex SHA-256 of the previous event's hash followed by this event's RFC 8785 canonical JSON. */
  hash: z.string(),
});
/** An event as stored and answered: the server's type and the console's. */
export type AuditEventView = z.infer<typeof auditEventSchema>;

export const listAuditOutput = z.object({
  events: z.array(auditEventSchema),
  next_cursor: z.string().optional(),
});
export type AuditTrailPage = z.infer<typeof listAuditOutput>;

export const verifyAuditOutput = z.object({
  ok: z.boolean(),
  checked: z.number().int().nonnegative(),
  /** The first event that does not follow from its predecessor (altered, removed or out of place). */
  firstBadId: z.string().optional(),
});
export type AuditVerification = z.infer<typeof verifyAuditOutput>;
