import { isIP } from 'node:net';
import type { Readable } from 'node:stream';
import { Agent, request } from 'undici';
import { z } from 'zod';
import { NO_CONTROL_CHARACTERS } from '../../shared/ids.ts';
import { readUpTo } from '../http/read-stream.ts';
import { err, ok, type Result } from '../result.ts';
import { guardedLookup, isLoopbackAddress, isPublicAddress } from './address-policy.ts';
import { redirectUriProblem } from './redirect-uris.ts';

/**
 * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, MCP 2025-11-25): a
 * client_id that is an https URL names a JSON document describing the client. Fetching one is a
 * request this server makes to an address a stranger chose, so it is fenced: https only (http only
 * on a loopback host with CIMD_ALLOW_HTTP_LOOPBACK=1), public addresses only (checked when
 * connecting, address-policy.ts), no redirects, at most 5 KB, at most 5 s in all.
 */

export const CIMD_LIMITS = { maxBytes: 5 * 1024, timeoutMs: 5_000 } as const;

export interface ClientMetadata {
  clientName: string;
  redirectUris: string[];
}

const documentSchema = z.object({
  client_id: z.string(),
  client_name: z.string().min(1).max(200).optional(),
  redirect_uris: z.array(z.string()).min(1).max(20),
  token_endpoint_auth_method: z.string().optional(),
  grant_types: z.array(z.string()).optional(),
  response_types: z.array(z.string()).optional(),
});

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Is `value` a client_id meant as a metadata document's URL (rather than a registered id)? */
export function looksLikeMetadataUrl(value: string): boolean {
  return /^https?:\/\//i.test(value);
}

/**
 * Why `clientId` cannot be a metadata document URL, or undefined: https with a path (not `/`), no
 * fragment, userinfo or dot segments, host not an IP of a private range.
 */
export function metadataUrlProblem(clientId: string, allowHttpLoopback: boolean): string | undefined {
  if (clientId.length > 2_000 || !NO_CONTROL_CHARACTERS.test(clientId))
    return 'the client_id URL is too long or malformed';
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return 'the client_id is not a URL';
  }
  if (url.href !== clientId) return 'the client_id URL must be written in its normal form';
  const loopbackHttp = allowHttpLoopback && url.protocol === 'http:' && LOOPBACK_NAMES.has(url.hostname);
  if (url.protocol !== 'https:' && !loopbackHttp) return 'the client_id URL must use https';
  if (url.pathname === '/' || url.hash || url.username || url.password)
    return 'the client_id URL must have a path and no fragment or userinfo';
  const literal = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(literal) && !isPublicAddress(literal, loopbackHttp && isLoopbackAddress(literal)))
    return 'the client_id URL names a private or reserved address';
  return undefined;
}

export type FetchFailure = string;

/** Fetches and checks one document; the failure is a sentence for `error_description`. */
export class MetadataDocumentFetcher {
  readonly #public: Agent;
  readonly #loopback: Agent | undefined;

  constructor(private readonly allowHttpLoopback: boolean) {
    const connect = { timeout: CIMD_LIMITS.timeoutMs };
    this.#public = new Agent({ connect: { ...connect, lookup: guardedLookup(false) } });
    this.#loopback = allowHttpLoopback
      ? new Agent({ connect: { ...connect, lookup: guardedLookup(true) } })
      : undefined;
  }

  async fetch(clientId: string): Promise<Result<ClientMetadata, FetchFailure>> {
    const problem = metadataUrlProblem(clientId, this.allowHttpLoopback);
    if (problem) return err(problem);
    const url = new URL(clientId);
    const dispatcher = url.protocol === 'http:' ? this.#loopback : this.#public;
    if (!dispatcher) return err('the client_id URL must use https');
    const signal = AbortSignal.timeout(CIMD_LIMITS.timeoutMs);
    let text: string;
    try {
      const response = await request(url, {
        dispatcher,
        signal,
        headers: { accept: 'application/json' },
      });
      if (response.statusCode !== 200) {
        discard(response.body);
        return err(`the client metadata document answered ${response.statusCode}`);
      }
      const read = await readUpTo(response.body, CIMD_LIMITS.maxBytes);
      discard(response.body);
      if (read.over) return err(`the client metadata document is larger than ${CIMD_LIMITS.maxBytes} bytes`);
      text = read.bytes.toString('utf8');
    } catch (error) {
      if (signal.aborted)
        return err(`the client metadata document did not arrive within ${CIMD_LIMITS.timeoutMs} ms`);
      return err(
        codesOf(error).includes('ERR_FORBIDDEN_ADDRESS')
          ? 'the client_id URL resolves to a private or reserved address'
          : 'the client metadata document could not be fetched',
      );
    }
    return parseDocument(clientId, text);
  }

  close(): Promise<void> {
    return Promise.all([this.#public.close(), this.#loopback?.close()]).then(() => undefined);
  }
}

/**
 * Drops what is left of an answer. Destroying the stream makes it emit an error: without a listener
 * that error would be an uncaught exception (seen: a 302 document brought the test run down).
 */
function discard(body: Readable): void {
  body.on('error', () => {});
  body.destroy();
}

/** The `code` of an error and of each of its causes (undici wraps what the lookup threw). */
function codesOf(error: unknown): string[] {
  const codes: string[] = [];
  for (
    let e = error as { code?: unknown; cause?: unknown } | undefined, depth = 0;
    e && depth < 5;
    depth += 1
  ) {
    if (typeof e.code === 'string') codes.push(e.code);
    e = e.cause as typeof e;
  }
  return codes;
}

function parseDocument(clientId: string, text: string): Result<ClientMetadata, FetchFailure> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return err('the client metadata document is not JSON');
  }
  const parsed = documentSchema.safeParse(json);
  if (!parsed.success) return err('the client metadata document lacks client_id or redirect_uris');
  const document = parsed.data;
  if (document.client_id !== clientId) return err('the client metadata document names another client_id');
  if (document.token_endpoint_auth_method !== undefined && document.token_endpoint_auth_method !== 'none')
    return err('only public clients (token_endpoint_auth_method "none") are supported');
  for (const uri of document.redirect_uris) {
    const problem = redirectUriProblem(uri);
    if (problem) return err(`a redirect URI of the client metadata document ${problem}`);
  }
  const name =
    document.client_name && NO_CONTROL_CHARACTERS.test(document.client_name)
      ? document.client_name
      : undefined;
  return ok({
    clientName: name ?? new URL(clientId).host,
    redirectUris: [...new Set(document.redirect_uris)],
  });
}
