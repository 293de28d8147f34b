import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Principal } from '../auth/authenticate.ts';
import { SCOPE } from '../auth/scopes.ts';
import type { Clock } from '../clock.ts';
import { LIMITS } from '../config.ts';
import type { PrismaClient } from '../db/generated/client.ts';

/**
 * Web console sessions (docs/reference.md "Console"): an admin key is exchanged once for a random
 * token that lives only in an HttpOnly cookie. The database keeps the token's SHA-256, the id of
 * the key it was opened with, and when it ends — never the key, never the token.
 *
 * A session is worth exactly what its key is worth, checked on every request against the key's
 * row (not a cache): revoking the key, or taking `admin` from it, ends every session opened with it
 * on every server at once. A session of TOOLGATE_ADMIN_KEY (no row) carries an HMAC of that key
 * under its own token; once the server runs with another key (or none) it stops matching.
 *
 * CSRF: state-changing requests made with the cookie must carry `X-CSRF-Token`, an HMAC of the
 * token the server hands to the signed-in page (the synchronizer-token pattern, tied to the
 * session). A page on another site can neither read the cookie nor this value.
 */

/** What a signed-in page learns of its session (never the token). */
export interface SessionView {
  keyId: string | null;
  expiresAt: string;
  csrfToken: string;
}

export interface OpenedSession {
  /** The cookie's value: shown to the browser once, in Set-Cookie. */
  token: string;
  view: SessionView;
}

/** 32 random bytes, base64url: what a cookie must hold to be read at all. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

const digest = (token: string) => createHash('sha256').update(token).digest('base64url');
const hmac = (token: string, message: string) =>
  createHmac('sha256', token).update(message).digest('base64url');

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

export class ConsoleSessions {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
    /** TOOLGATE_ADMIN_KEY of this server, if any. */
    private readonly adminKey: string | undefined,
  ) {}

  /** A new session for an admin principal that has just shown its key. */
  async open(principal: Principal): Promise<OpenedSession> {
    const now = this.clock.now();
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(now + LIMITS.consoleSessionMs);
    // Expired sessions are swept by whoever signs in next: bounded work, no timer per server.
    await this.prisma.consoleSession.deleteMany({ where: { expiresAt: { lte: new Date(now) } } });
    await this.prisma.consoleSession.create({
      data: {
        id: digest(token),
        keyId: principal.keyId,
        envKeyTag: principal.keyId === null && this.adminKey ? hmac(token, this.adminKey) : null,
        createdAt: new Date(now),
        expiresAt,
      },
      select: { id: true },
    });
    return { token, view: this.#view(token, principal.keyId, expiresAt) };
  }

  /**
   * The principal behind a cookie's token, or null: unknown, expired, or its key revoked, deleted,
   * stripped of `admin`, or (TOOLGATE_ADMIN_KEY) no longer this server's key.
   */
  async find(token: string): Promise<{ principal: Principal; view: SessionView } | null> {
    if (!TOKEN.test(token)) return null;
    const row = await this.prisma.consoleSession.findUnique({
      where: { id: digest(token) },
      select: { id: true, keyId: true, envKeyTag: true, expiresAt: true },
    });
    if (!row || row.expiresAt.getTime() <= this.clock.now()) return null;
    const view = this.#view(token, row.keyId, row.expiresAt);
    if (row.keyId === null) {
      const current = this.adminKey ? hmac(token, this.adminKey) : null;
      if (!current || !row.envKeyTag || !sameText(current, row.envKeyTag)) return null;
      return { principal: { keyId: null, clientId: null, scopes: [SCOPE.admin] }, view };
    }
    const key = await this.prisma.apiKey.findUnique({
      where: { id: row.keyId },
      select: { id: true, clientId: true, scopes: true, revokedAt: true },
    });
    if (!key || key.revokedAt || !key.scopes.includes(SCOPE.admin)) return null;
    return { principal: { keyId: key.id, clientId: key.clientId, scopes: key.scopes }, view };
  }

  /** Whether `header` is this session's CSRF token. */
  csrfMatches(token: string, header: string | undefined): boolean {
    return header !== undefined && sameText(hmac(token, 'csrf'), header);
  }

  /** Signs out: the session is gone on every server. */
  async close(token: string): Promise<void> {
    if (!TOKEN.test(token)) return;
    await this.prisma.consoleSession.deleteMany({ where: { id: digest(token) } });
  }

  #view(token: string, keyId: string | null, expiresAt: Date): SessionView {
    return { keyId, expiresAt: expiresAt.toISOString(), csrfToken: hmac(token, 'csrf') };
  }
}
