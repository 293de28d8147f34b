/**
 * Cursor paging by position, newest first (the call log and the audit trail): a page ends at a
 * record (its time and id), and the next page holds what is older. Records written meanwhile
 * never shift a page, as offsets would.
 */
export interface KeysetPosition {
  at: Date;
  /** The record's id: digits (a database sequence). */
  id: string;
}

import { apiError, type ErrorBody } from '../../shared/errors.ts';

/** PostgreSQL's largest bigint: an id past it would fail the query instead of meaning "older". */
const MAX_BIGINT = 9_223_372_036_854_775_807n;

/** Opaque to callers: base64url of `[at ISO, id]`. */
export function encodeCursor(position: KeysetPosition): string {
  return Buffer.from(JSON.stringify([position.at.toISOString(), position.id])).toString('base64url');
}

/** The position a cursor of ours names, or null for anything this server did not give. */
export function decodeCursor(cursor: string): KeysetPosition | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(value) || value.length !== 2) return null;
    const [at, id] = value as unknown[];
    if (typeof at !== 'string' || typeof id !== 'string' || !/^\d{1,19}$/.test(id)) return null;
    if (BigInt(id) > MAX_BIGINT) return null;
    const date = new Date(at);
    if (Number.isNaN(date.getTime())) return null;
    const position = { at: date, id };
    // Only the exact text we write: no second spelling of one position.
    return encodeCursor(position) === cursor ? position : null;
  } catch {
    return null;
  }
}

/** The first `limit` of `rows` (read with `limit + 1`), and the position of the last when more follow. */
export function pageOf<Row>(
  rows: Row[],
  limit: number,
  positionOf: (row: Row) => KeysetPosition,
): { items: Row[]; next?: KeysetPosition } {
  if (rows.length <= limit) return { items: rows };
  const items = rows.slice(0, limit);
  return { items, next: positionOf(items[items.length - 1] as Row) };
}

/** 400 for a cursor this server did not give (the same words as GET /tools). */
export function badCursor(): ErrorBody<'invalid_request'> {
  return apiError('invalid_request', 'The cursor is not one this server gave.', {
    issues: [{ path: '/cursor', message: 'Must be the next_cursor of a previous page.' }],
  });
}
