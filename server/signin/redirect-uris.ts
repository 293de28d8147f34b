import { NO_CONTROL_CHARACTERS } from '../../shared/ids.ts';

/**
 * The redirect URIs of MCP clients (docs/reference.md "MCP sign-in"): what a registration or a
 * metadata document may name, and how /oauth2/authorize matches one. Written here because no
 * library we use carries RFC 8252's rules: oauth4webapi and openid-client are client libraries.
 */

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
/** Schemes that run or read something in the browser itself: never a place to send a code. */
const FORBIDDEN_SCHEMES = new Set([
  'javascript:',
  'data:',
  'file:',
  'vbscript:',
  'about:',
  'blob:',
  'filesystem:',
]);
/** Longer than any redirect URI seen in practice; keeps rows and pages small. */
export const MAX_REDIRECT_URI_LENGTH = 2_000;

function parse(uri: string): URL | undefined {
  try {
    return new URL(uri);
  } catch {
    return undefined;
  }
}

function isLoopbackHttp(url: URL): boolean {
  return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}

/**
 * Why `uri` cannot be a client's redirect URI, or undefined when it can: an absolute URI without
 * fragment or userinfo; `https`, `http` on a loopback host (RFC 8252 §7.3, desktop clients), or a
 * private-use scheme (RFC 8252 §7.1, e.g. `cursor://…`).
 */
export function redirectUriProblem(uri: string): string | undefined {
  if (uri.length === 0 || uri.length > MAX_REDIRECT_URI_LENGTH)
    return `must be 1 to ${MAX_REDIRECT_URI_LENGTH} characters`;
  if (!NO_CONTROL_CHARACTERS.test(uri)) return 'must not contain control characters';
  const url = parse(uri);
  if (!url) return 'must be an absolute URI';
  if (url.hash !== '' || uri.includes('#')) return 'must not have a fragment';
  if (url.username !== '' || url.password !== '') return 'must not carry userinfo';
  if (FORBIDDEN_SCHEMES.has(url.protocol)) return `must not use the ${url.protocol} scheme`;
  if (url.protocol === 'http:' && !isLoopbackHttp(url)) return 'must use https unless its host is loopback';
  return undefined;
}

/**
 * Does the `requested` redirect URI name one of the `registered` ones? Exact string match, except
 * that an http loopback URI matches on any port (RFC 8252 §7.3: a desktop client listens on
 * whatever port is free when the flow starts).
 */
export function matchesRedirectUri(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true;
  const wanted = parse(requested);
  if (!wanted || !isLoopbackHttp(wanted)) return false;
  return registered.some((uri) => {
    const known = parse(uri);
    if (!known || !isLoopbackHttp(known)) return false;
    known.port = wanted.port;
    return known.href === wanted.href && sameTextButPort(uri, requested);
  });
}

/** The two URIs differ at most in their port (no normalisation beyond that). */
function sameTextButPort(a: string, b: string): boolean {
  const stripPort = (uri: string) => uri.replace(/^(http:\/\/(?:\[[^\]]*\]|[^/:?#]+))(?::\d+)?/i, '$1');
  return stripPort(a) === stripPort(b);
}
