import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { SingleFlight } from '../single-flight.ts';
import { issuerMatches, nominalIssuer, type OAuthAuth } from './provider.ts';

/** How long a provider's metadata answer (or its absence) is trusted. */
const METADATA_TTL_MS = 60 * 60 * 1000;
const MISSING_METADATA_TTL_MS = 60 * 1000;
const METADATA_TIMEOUT_MS = 3_000;

/**
 * RFC 9207 (`iss` in the authorization response), the mix-up defence. An `iss` that is present
 * must name the app's authorization server: the registration's `issuer` exactly when it gives one,
 * else the origin of its authorization endpoint. An `iss` that is missing fails the callback when
 * the registration gives an issuer, or when the server's metadata (RFC 8414 / OpenID discovery at
 * the issuer) says `authorization_response_iss_parameter_supported`; a server that never sends
 * it is still served. Metadata answers are cached per issuer; built once per server in app.ts.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9207#section-2.4
 */
export class IssuerPolicy {
  readonly #supported = new LRUCache<string, boolean>({ max: 1_000 });
  readonly #lookups = new SingleFlight<string, boolean>();

  constructor(private readonly logger: Logger) {}

  /** true when an `iss` of this value may come from the app's authorization server. */
  accepts(auth: OAuthAuth, iss: string): boolean {
    return auth.issuer !== undefined ? iss === auth.issuer : issuerMatches(auth, iss);
  }

  /** true when a callback without `iss` must fail. */
  async requiresIss(auth: OAuthAuth): Promise<boolean> {
    if (auth.issuer !== undefined) return true;
    const issuer = nominalIssuer(auth);
    const cached = this.#supported.get(issuer);
    if (cached !== undefined) return cached;
    return this.#lookups.run(issuer, () => this.#discover(issuer));
  }

  async #discover(issuer: string): Promise<boolean> {
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const metadata = await fetchJson(`${issuer}${path}`);
      if (metadata && (metadata.issuer === undefined || metadata.issuer === issuer)) {
        const supported = metadata.authorization_response_iss_parameter_supported === true;
        this.#supported.set(issuer, supported, { ttl: METADATA_TTL_MS });
        return supported;
      }
    }
    this.logger.debug({ issuer }, 'no authorization server metadata; iss is checked only when sent');
    this.#supported.set(issuer, false, { ttl: MISSING_METADATA_TTL_MS });
    return false;
  }
}

async function fetchJson(url: string): Promise<Record<string, unknown> | null> {
  try {
    const response = await fetch(url, {
      signal: AbortSignal.timeout(METADATA_TIMEOUT_MS),
      redirect: 'error',
      headers: { accept: 'application/json' },
    });
    if (!response.ok) {
      await response.body?.cancel();
      return null;
    }
    const body: unknown = await response.json();
    return body !== null && typeof body === 'object' && !Array.isArray(body)
      ? (body as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}
