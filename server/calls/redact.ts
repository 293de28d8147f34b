import { encodeStrict } from '../catalog/serialize.ts';
import { LIMITS } from '../config.ts';
import { excerpt } from '../excerpt.ts';

/** What stands in for a secret in a relayed body (docs/reference.md "Agent endpoints"). */
export const REDACTED = '[REDACTED]';
const REDACTED_BYTES = Buffer.from(REDACTED);
/** A cut excerpt ending in this many leading characters of a secret loses that tail too. */
const MIN_PARTIAL = 4;
/** Characters that no encoding below changes: a secret made of them only has one form. */
const SAME_IN_EVERY_FORM = /^[A-Za-z0-9_.-]*$/;
const NON_ASCII = /[\u0080-\uffff]/;
const NON_ASCII_ALL = /[\u0080-\uffff]/g;
const lowerHex = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
const upperHex = (c: string) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;

/**
 * Every form in which the service writes `secret` on the wire, and in which an upstream that echoes
 * it writes it back (docs/reference.md "Agent endpoints"): as is; percent-encoded by our query rules
 * (RFC 3986 unreserved kept), by `encodeURIComponent` (also keeps `!'()*`) and by form rules
 * (`application/x-www-form-urlencoded`: `+` for a space, `*` kept, `~` escaped), as the token
 * endpoint's body is written; and inside a JSON string (`"` and `\` escaped, optionally `/` as `\/`
 * and non-ASCII as `\u` escapes, as PHP's and Python's encoders write it). The encodings yield
 * only characters JSON never escapes, so only the secret as is has JSON forms. A Basic credential
 * is a secret of its own (its base64 text), added by whoever wrote it (oauth/provider.ts).
 *
 * @example
 * wireForms('a+b/c') // ['a+b/c', 'a%2Bb%2Fc', 'a+b\\/c']
 */
export function wireForms(secret: string): string[] {
  if (SAME_IN_EVERY_FORM.test(secret)) return [secret];
  const json = JSON.stringify(secret).slice(1, -1);
  const forms = new Set([
    secret,
    encodeStrict(secret),
    encodeURIComponent(secret),
    new URLSearchParams({ s: secret }).toString().slice(2),
    json,
    json.replaceAll('/', '\\/'),
  ]);
  if (NON_ASCII.test(json)) {
    for (const hex of [lowerHex, upperHex]) {
      const ascii = json.replace(NON_ASCII_ALL, hex);
      forms.add(ascii);
      forms.add(ascii.replaceAll('/', '\\/'));
    }
  }
  return [...forms];
}

/**
 * Keeps the secrets the service itself put into an upstream exchange (access and refresh tokens,
 * the app's API key or client secret, Basic credentials built from them) out of what it relays:
 * every occurrence, in each of its wire forms (`wireForms`), becomes `[REDACTED]`. Longest forms
 * first, so one that contains another is replaced whole.
 */
export class Redactor {
  readonly #secrets: string[];

  constructor(secrets: Iterable<string>) {
    // No secret (an app with auth `none`, most calls): nothing to build.
    this.#secrets =
      secrets instanceof Set && secrets.size === 0
        ? []
        : [...new Set([...secrets].filter((s) => s.length > 0).flatMap(wireForms))].sort(
            (a, b) => b.length - a.length,
          );
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
