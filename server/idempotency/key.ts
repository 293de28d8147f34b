import type { ErrorBody } from '../../shared/errors.ts';
import { IDEMPOTENCY_KEY_PATTERN } from '../../shared/ids.ts';
import { badHeader } from '../errors.ts';

const HEADER_NAME = 'X-Service-Idempotency-Key';

/**
 * X-Service-Idempotency-Key: absent is fine (no deduplication); present must be well formed.
 * Node trims the value's surrounding whitespace, so a key of spaces only arrives empty and fails.
 */
export function checkIdempotencyKey(value: string | undefined): ErrorBody | null {
  if (value === undefined || IDEMPOTENCY_KEY_PATTERN.test(value)) return null;
  return badHeader(`${HEADER_NAME} must be 1 to 255 printable ASCII characters.`);
}
