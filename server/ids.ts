import { randomBytes } from 'node:crypto';

/**
 * Row ids: a readable prefix naming the kind of record, `_`, and 20 random characters of
 * [a-z0-9] (about 103 bits), e.g. `cli_3k9x…`. One map of prefixes, so an id says what it is
 * wherever it shows up (logs, URLs, an API key's `tg_key_…`).
 *
 * @example newId('client') // 'cli_0f3kq9…'
 */
export const ID_PREFIX = {
  apiKey: 'key',
  client: 'cli',
  connection: 'con',
  oauthState: 'ost',
  /** A URL-elicitation link of a signed-in person (/oauth/start/{id}). */
  oauthStart: 'osl',
  signinGrant: 'sgr',
  signinLogin: 'sgl',
  signinRequest: 'sar',
} as const;

export type IdKind = keyof typeof ID_PREFIX;

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
/** The largest multiple of 36 below 256: bytes at or above it are redrawn, so every character is equally likely. */
const UNBIASED_BELOW = 252;

export function newId(kind: IdKind, length = 20): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length)) {
      if (byte < UNBIASED_BELOW && out.length < length) out += ALPHABET[byte % ALPHABET.length];
    }
  }
  return `${ID_PREFIX[kind]}_${out}`;
}
