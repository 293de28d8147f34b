/**
 * Why a connection failed, in two forms: the system or TLS code for the log (`ECONNREFUSED`,
 * `ERR_SSL_WRONG_VERSION_NUMBER`, …), and its kind from a fixed list, which the message of an
 * `upstream_unreachable` answer says in words — so nothing of the failure's own text reaches a
 * caller, and the body keeps the contract's shape (no extra field).
 */

/** The kinds of failure: a system error code, `tls` for any TLS failure, `other` for the rest. */
export const UNREACHABLE_CAUSES = [
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'tls',
  'other',
] as const;

export type UnreachableCause = (typeof UNREACHABLE_CAUSES)[number];

/** The system or TLS error code behind a failed request (undici and fetch nest it as `cause`). */
export function failureCode(error: unknown): string {
  type Failure = { code?: unknown; cause?: unknown; name?: unknown } | undefined;
  let e = error as Failure;
  for (let depth = 0; e && depth < 4; depth++, e = e.cause as Failure) {
    if (typeof e.code === 'string' && !e.code.startsWith('UND_ERR_')) return e.code;
  }
  const { code, name } = (error ?? {}) as { code?: unknown; name?: unknown };
  return typeof code === 'string' ? code : typeof name === 'string' ? name : 'unknown';
}

const KNOWN = new Set<string>(UNREACHABLE_CAUSES);
/** undici's own codes for what the system would call these. */
const UNDICI: Record<string, UnreachableCause> = {
  UND_ERR_SOCKET: 'ECONNRESET',
  UND_ERR_CLOSED: 'ECONNRESET',
  UND_ERR_CONNECT_TIMEOUT: 'ETIMEDOUT',
};

/** The answer's `cause` for a failure code of {@link failureCode}. */
export function unreachableCause(code: string): UnreachableCause {
  if (KNOWN.has(code) && code !== 'tls' && code !== 'other') return code as UnreachableCause;
  if (UNDICI[code]) return UNDICI[code];
  if (/^ERR_(TLS|SSL)_|CERT|^EPROTO$|^UNABLE_TO_|SIGNATURE/.test(code)) return 'tls';
  return 'other';
}

const SAID: Record<UnreachableCause, string | undefined> = {
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: 'the connection was closed before an answer',
  ENOTFOUND: 'its host name does not resolve',
  EAI_AGAIN: 'its host name could not be resolved now (DNS)',
  EHOSTUNREACH: 'there is no route to its host',
  ENETUNREACH: 'its network is unreachable',
  ETIMEDOUT: 'connecting timed out',
  tls: 'the TLS handshake failed (certificate or protocol)',
  other: undefined,
};

/** `The upstream could not be reached: the connection was refused.` */
export function unreachableMessage(what: string, cause: UnreachableCause): string {
  const said = SAID[cause];
  return said ? `${what} could not be reached: ${said}.` : `${what} could not be reached.`;
}
