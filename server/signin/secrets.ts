import { createHash, randomBytes } from 'node:crypto';

/**
 * The bearer secrets of sign-in: authorization codes, access and refresh tokens. Each is 256 random
 * bits behind a prefix that says what it is (`tg_ac_`, `tg_at_`, `tg_rt_`), and is stored only as
 * its SHA-256. A hash this fast is enough here, unlike for API keys (argon2id): these secrets are
 * random and long, so there is nothing to guess from a hash, and a lookup by hash keeps the
 * single-use rules a conditional update on one indexed row.
 */
export const SECRET_PREFIX = { code: 'tg_ac_', access: 'tg_at_', refresh: 'tg_rt_' } as const;
export type SecretKind = keyof typeof SECRET_PREFIX;

const SHAPE = /^tg_(ac|at|rt)_[A-Za-z0-9_-]{43}$/;

export function newSecret(kind: SecretKind): { secret: string; hash: string } {
  const secret = `${SECRET_PREFIX[kind]}${randomBytes(32).toString('base64url')}`;
  return { secret, hash: hashSecret(secret) };
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('base64url');
}

/** Is this the shape of one of our secrets of `kind` (so a lookup is worth a query)? */
export function isSecretOf(kind: SecretKind, value: string): boolean {
  return value.startsWith(SECRET_PREFIX[kind]) && SHAPE.test(value);
}
