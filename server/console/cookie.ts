import type { IncomingHttpHeaders } from 'node:http';

/**
 * The console's session cookie (docs/reference.md "Console"). HttpOnly (no script reads it),
 * SameSite=Strict (no other site's page sends it), Path=/ (the console calls /admin/*). Behind
 * https (PUBLIC_URL) it is also Secure and carries the `__Host-` prefix, which browsers accept only
 * from a secure origin, on Path=/ and without Domain: no sibling host can set or shadow it.
 *
 * Written by hand rather than with a cookie library: the server reads one cookie whose value is
 * base64url and writes one fixed attribute list, and the parsing below is that much.
 */

export const CSRF_HEADER = 'x-csrf-token';

const NAME = 'toolgate_console';

export function cookieName(publicUrl: string): string {
  return isHttps(publicUrl) ? `__Host-${NAME}` : NAME;
}

const isHttps = (publicUrl: string) => publicUrl.startsWith('https:');

/** The session cookie's value from a request's Cookie header(s), if any. */
export function readSessionCookie(headers: IncomingHttpHeaders, publicUrl: string): string | undefined {
  const header = headers.cookie;
  if (!header) return undefined;
  const name = cookieName(publicUrl);
  for (const pair of header.split(';')) {
    const at = pair.indexOf('=');
    if (at !== -1 && pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim();
  }
  return undefined;
}

function attributes(publicUrl: string, maxAgeSeconds: number): string {
  const secure = isHttps(publicUrl) ? '; Secure' : '';
  return `Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure}`;
}

/** Set-Cookie for a new session. */
export function sessionCookie(publicUrl: string, token: string, maxAgeSeconds: number): string {
  return `${cookieName(publicUrl)}=${token}; ${attributes(publicUrl, maxAgeSeconds)}`;
}

/** Set-Cookie that removes the session cookie. */
export function clearedCookie(publicUrl: string): string {
  return `${cookieName(publicUrl)}=; ${attributes(publicUrl, 0)}`;
}
