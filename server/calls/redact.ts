import { LIMITS } from '../config.ts';
import { excerpt } from '../excerpt.ts';

/** What stands in for a secret in a relayed body (docs/reference.md "Agent endpoints"). */
export const REDACTED = '[REDACTED]';
const REDACTED_BYTES = Buffer.from(REDACTED);
/** A cut excerpt ending in this many leading characters of a secret loses that tail too. */
const MIN_PARTIAL = 4;

/**
 * Keeps the secrets the service itself put into an upstream exchange (access and refresh tokens,
 * the app's API key or client secret, Basic credentials built from them) out of what it relays:
 * every occurrence becomes `[REDACTED]`. Longest secrets first, so one that contains another is
 * replaced whole.
 */
export class Redactor {
  readonly #secrets: string[];

  constructor(secrets: Iterable<string>) {
    // No secret (an app with auth `none`, most calls): nothing to build.
    this.#secrets =
      secrets instanceof Set && secrets.size === 0
        ? []
        : [...new Set(secrets)].filter((s) => s.length > 0).sort((a, b) => b.length - a.length);
  }

  get empty(): boolean {
    return this.#secrets.length === 0;
  }

  /** Raw bytes (a success body before it is parsed): text, JSON and binary alike. */
  bytes(body: Buffer): Buffer {
    let out = body;
    for (const secret of this.#secrets) {
      const needle = Buffer.from(secret);
      let at = out.indexOf(needle);
      if (at === -1) continue;
      const parts: Buffer[] = [];
      let from = 0;
      while (at !== -1) {
        parts.push(out.subarray(from, at), REDACTED_BYTES);
        from = at + needle.length;
        at = out.indexOf(needle, from);
      }
      parts.push(out.subarray(from));
      out = Buffer.concat(parts);
    }
    return out;
  }

  text(text: string): string {
    let out = text;
    for (const secret of this.#secrets) out = out.replaceAll(secret, REDACTED);
    return out;
  }

  /** A parsed JSON value: every string and every member name (catches secrets written with JSON escapes). */
  value(value: unknown): unknown {
    if (typeof value === 'string') return this.text(value);
    if (Array.isArray(value)) return value.map((item) => this.value(item));
    if (value !== null && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [name, member] of Object.entries(value)) {
        Object.defineProperty(out, this.text(name), {
          value: this.value(member),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
    return value;
  }

  /**
   * An `upstream_body` excerpt: redacted, still at most 64 KiB, and without a secret's beginning
   * left at its end where the 64 KiB cut went through the secret.
   */
  excerpt(text: string): string {
    // An excerpt that was cut is 64 KiB less at most 3 bytes (a character split by the cut).
    const cut = Buffer.byteLength(text) >= LIMITS.upstreamBodyExcerptBytes - 3;
    let out = this.text(text);
    if (Buffer.byteLength(out) > LIMITS.upstreamBodyExcerptBytes) out = excerpt(Buffer.from(out));
    if (!cut) return out;
    for (const secret of this.#secrets) {
      for (let k = secret.length - 1; k >= MIN_PARTIAL; k -= 1) {
        if (out.endsWith(secret.slice(0, k))) {
          out = out.slice(0, out.length - k);
          break;
        }
      }
    }
    return out;
  }
}
