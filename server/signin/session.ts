import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { jwtVerify, SignJWT } from 'jose';

/**
 * The browser session of a signed-in person (docs/reference.md "MCP sign-in"): a cookie holding a
 * JWT (jose, HS256) that says who signed in and until when, signed with a key every server of
 * the cluster shares (`server_secrets`), so any server reads it. HttpOnly, SameSite=Lax, Secure
 * under an https PUBLIC_URL. It holds no secret: only the person's `sub` at the login provider.
 */

export const SESSION_COOKIE = 'toolgate_session';
/** Binds a sign-in in progress to the browser that started it (login CSRF): random, short-lived. */
export const LOGIN_COOKIE = 'toolgate_login';
export const SESSION_TTL_S = 8 * 60 * 60;
export const LOGIN_TTL_S = 10 * 60;
const AUDIENCE = 'toolgate-session';

export interface Session {
  /** The person's subject at the login provider. */
  sub: string;
}

/** `oidc:<sub>`: the end user a signed-in person is, for tokens, connections and elicitation links. */
export function userIdOf(sub: string): string {
  return `oidc:${sub}`;
}

export class SessionCookies {
  readonly #secure: boolean;

  constructor(
    private readonly key: () => Promise<Buffer>,
    private readonly issuer: string,
    private readonly now: () => number,
  ) {
    this.#secure = issuer.startsWith('https:');
  }

  /** The Set-Cookie value that signs `sub` in. */
  async issue(sub: string): Promise<string> {
    const at = Math.floor(this.now() / 1000);
    const jwt = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(sub)
      .setIssuer(this.issuer)
      .setAudience(AUDIENCE)
      .setIssuedAt(at)
      .setExpirationTime(at + SESSION_TTL_S)
      .sign(await this.key());
    return this.cookie(SESSION_COOKIE, jwt, SESSION_TTL_S);
  }

  /** The signed-in person of a request, or undefined (no cookie, a forged or expired one). */
  async read(headers: IncomingHttpHeaders): Promise<Session | undefined> {
    const jwt = readCookie(headers, SESSION_COOKIE);
    if (!jwt || jwt.length > 4_096) return undefined;
    try {
      const { payload } = await jwtVerify(jwt, await this.key(), {
        algorithms: ['HS256'],
        issuer: this.issuer,
        audience: AUDIENCE,
        currentDate: new Date(this.now()),
      });
      return typeof payload.sub === 'string' && payload.sub.length > 0 ? { sub: payload.sub } : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * A form's anti-forgery value: an HMAC of what the form acts on and who may submit it, so a
   * form posted for another request or by another person is refused (SameSite=Lax already keeps
   * the cookie off cross-site posts; this does not rely on the browser alone).
   */
  async formToken(sub: string, subject: string): Promise<string> {
    return createHmac('sha256', await this.key())
      .update(`form\n${sub}\n${subject}`)
      .digest('base64url');
  }

  async checkFormToken(sub: string, subject: string, token: string | null): Promise<boolean> {
    if (!token) return false;
    const expected = Buffer.from(await this.formToken(sub, subject));
    const given = Buffer.from(token);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  cookie(name: string, value: string, maxAgeS: number): string {
    return `${name}=${value}; Path=/; Max-Age=${maxAgeS}; HttpOnly; SameSite=Lax${this.#secure ? '; Secure' : ''}`;
  }
}

/** One cookie's value from the Cookie header (the first of that name), or undefined. */
export function readCookie(headers: IncomingHttpHeaders, name: string): string | undefined {
  const header = headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at === -1) continue;
    if (part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}
