import { LRUCache } from 'lru-cache';
import type { Principal } from '../auth/authenticate.ts';
import type { Clock } from '../clock.ts';
import { LIMITS } from '../config.ts';
import type { PrismaClient } from '../db/generated/client.ts';
import { hashSecret, isSecretOf } from './secrets.ts';

/** The caller a token makes (auth/agent.ts `Caller`, spelled here so signin/ does not import the surface). */
export interface TokenCaller {
  principal: Principal;
  clientId: string;
  userId: string;
}

interface Entry {
  caller: TokenCaller;
  expiresAt: number;
  checkedAt: number;
}

/**
 * The access tokens of MCP sign-in, as /mcp checks them (auth/agent.ts `authenticateAgent`): the
 * row is found by the token's hash; a valid token is remembered (by hash) and its row re-read
 * every LIMITS.apiKeyRecheckMs, as API keys are, so a revocation on any server is seen by every
 * server within 5 s. The caller is the token's client, its grant's scopes, and `oidc:<sub>`.
 */
export class AccessTokenVerifier {
  readonly #valid = new LRUCache<string, Entry>({ max: LIMITS.apiKeyCacheSize });

  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
  ) {}

  claims(token: string): boolean {
    return isSecretOf('access', token);
  }

  async verify(token: string): Promise<TokenCaller | undefined> {
    const hash = hashSecret(token);
    const now = this.clock.now();
    const known = this.#valid.get(hash);
    if (known && now - known.checkedAt < LIMITS.apiKeyRecheckMs) {
      if (known.expiresAt > now) return known.caller;
      this.#valid.delete(hash);
      return undefined;
    }
    const row = await this.prisma.signinToken.findUnique({
      where: { hash },
      select: {
        kind: true,
        expiresAt: true,
        grant: { select: { id: true, clientId: true, userId: true, scopes: true, revokedAt: true } },
      },
    });
    if (row?.kind !== 'access' || row.grant.revokedAt !== null || row.expiresAt.getTime() <= now) {
      this.#valid.delete(hash);
      return undefined;
    }
    const { grant } = row;
    // The grant's id stands for the key: the rate limit, MCP client memory and request-state
    // binding of /mcp are per grant (one consent of one person for one client).
    const caller: TokenCaller = {
      principal: { keyId: grant.id, clientId: grant.clientId, scopes: grant.scopes },
      clientId: grant.clientId,
      userId: grant.userId,
    };
    this.#valid.set(hash, { caller, expiresAt: row.expiresAt.getTime(), checkedAt: now });
    return caller;
  }
}
