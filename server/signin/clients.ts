import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { NO_CONTROL_CHARACTERS } from '../../shared/ids.ts';
import type { Clock } from '../clock.ts';
import type { Prisma, PrismaClient } from '../db/generated/client.ts';
import { ID_PREFIX, newId } from '../ids.ts';
import { appendAuditIn } from '../observe/audit.ts';
import { err, ok, type Result } from '../result.ts';
import { looksLikeMetadataUrl, type MetadataDocumentFetcher } from './metadata-document.ts';
import { type OAuthError, oauthError } from './oauth-error.ts';
import { redirectUriProblem } from './redirect-uris.ts';

/**
 * The MCP clients of sign-in (docs/reference.md "MCP sign-in"): registered at /oauth2/register
 * (RFC 7591) or named by a Client ID Metadata Document URL. Either way the client becomes an AI
 * client of the admin API (a `clients` row, its redirect URIs as `redirect_uris` rows), and a
 * `signin_clients` row says which client_id it presents. Every server reads the same rows.
 */

export interface SigninClientInfo {
  /** The `clients` row's id: the client of its tokens, connections and calls. */
  clientId: string;
  /** What the client presents as client_id (its id, or its document's URL). */
  publicId: string;
  name: string;
  redirectUris: string[];
}

/** How long a fetched metadata document is trusted before it is fetched again (contract: ≤ 24 h). */
export const METADATA_DOCUMENT_TTL_MS = 60 * 60 * 1000;

const GRANT_TYPES = ['authorization_code', 'refresh_token'];

export interface Registration {
  client_id: string;
  client_id_issued_at: number;
  client_name: string;
  redirect_uris: string[];
  grant_types: string[];
  response_types: string[];
  token_endpoint_auth_method: 'none';
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

/**
 * The client id of a metadata document's URL: derived from the URL, so servers that fetch the
 * same document at once write the same rows (an upsert, not two clients).
 */
function clientIdOfUrl(url: string): string {
  const digest = createHash('sha256').update(url, 'utf8').digest();
  let id = '';
  for (const byte of digest.subarray(0, 20)) id += 'abcdefghijklmnopqrstuvwxyz0123456789'[byte % 36];
  return `${ID_PREFIX.client}_${id}`;
}

export class SigninClients {
  /** Resolved clients by presented client_id; a metadata document stays at most its TTL. */
  readonly #cache = new LRUCache<string, SigninClientInfo>({ max: 1_000, ttl: 60_000 });

  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
    private readonly documents: MetadataDocumentFetcher,
  ) {}

  /** POST /oauth2/register: a public client with the given redirect URIs (RFC 7591 §3). */
  async register(body: unknown): Promise<Result<Registration, OAuthError>> {
    if (body === null || typeof body !== 'object' || Array.isArray(body))
      return err(oauthError('invalid_client_metadata', 'The body must be a JSON object of client metadata.'));
    const metadata = body as Record<string, unknown>;
    const uris = metadata.redirect_uris;
    if (!isStringArray(uris) || uris.length === 0 || uris.length > 20)
      return err(oauthError('invalid_redirect_uri', 'redirect_uris must be an array of 1 to 20 URIs.'));
    for (const uri of uris) {
      const problem = redirectUriProblem(uri);
      if (problem) return err(oauthError('invalid_redirect_uri', `A redirect URI ${problem}.`));
    }
    const name = metadata.client_name ?? 'MCP client';
    if (
      typeof name !== 'string' ||
      name.length === 0 ||
      name.length > 200 ||
      !NO_CONTROL_CHARACTERS.test(name)
    )
      return err(oauthError('invalid_client_metadata', 'client_name must be 1 to 200 characters.'));
    const grantTypes = metadata.grant_types ?? ['authorization_code'];
    if (!isStringArray(grantTypes) || grantTypes.some((type) => !GRANT_TYPES.includes(type)))
      return err(
        oauthError('invalid_client_metadata', 'grant_types may hold authorization_code and refresh_token.'),
      );
    const responseTypes = metadata.response_types ?? ['code'];
    if (!isStringArray(responseTypes) || responseTypes.some((type) => type !== 'code'))
      return err(oauthError('invalid_client_metadata', 'response_types may hold only code.'));

    const clientId = newId('client');
    const now = new Date(this.clock.now());
    const redirectUris = [...new Set(uris)];
    await this.prisma.$transaction(async (tx) => {
      await tx.client.create({ data: { id: clientId, name, createdAt: now }, select: { id: true } });
      await tx.redirectUri.createMany({
        data: redirectUris.map((uri) => ({ clientId, uri, createdAt: now })),
      });
      await tx.signinClient.create({
        data: { clientId, publicId: clientId, kind: 'registered', createdAt: now },
        select: { clientId: true },
      });
      // Anyone may register (RFC 7591, open registration): the server records it as its own act.
      await appendAuditIn(tx, this.clock, {
        actor: 'system',
        action: 'client.created',
        target: clientId,
        details: { name, registration: 'dynamic', redirectUris },
      });
    });
    // A public client: whatever method it asked for, it authenticates with none (RFC 7591 §3.2.1
    // lets the server replace a value), and it gets no secret.
    return ok({
      client_id: clientId,
      client_id_issued_at: Math.floor(now.getTime() / 1000),
      client_name: name,
      redirect_uris: redirectUris,
      grant_types: GRANT_TYPES,
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
  }

  /**
   * The client a client_id names: a registered one, or the one a metadata document describes
   * (fetched when unknown or older than METADATA_DOCUMENT_TTL_MS). 401 invalid_client otherwise.
   */
  async resolve(publicId: string): Promise<Result<SigninClientInfo, OAuthError>> {
    const cached = this.#cache.get(publicId);
    if (cached) return ok(cached);
    const resolved = looksLikeMetadataUrl(publicId)
      ? await this.#fromDocument(publicId)
      : await this.#registered(publicId);
    if (resolved.ok) this.#cache.set(publicId, resolved.value);
    return resolved;
  }

  /** The client of a client_id without fetching anything (the token and revocation endpoints). */
  async known(publicId: string): Promise<SigninClientInfo | undefined> {
    const cached = this.#cache.get(publicId);
    if (cached) return cached;
    const row = await this.#row(publicId);
    return row ?? undefined;
  }

  async #registered(publicId: string): Promise<Result<SigninClientInfo, OAuthError>> {
    const row = await this.#row(publicId);
    return row ? ok(row) : err(unknownClient());
  }

  async #row(publicId: string): Promise<(SigninClientInfo & { fetchedAt: Date | null }) | null> {
    if (publicId.length > 2_000) return null;
    const row = await this.prisma.signinClient.findUnique({
      where: { publicId },
      select: { clientId: true, fetchedAt: true },
    });
    if (!row) return null;
    const [client, uris] = await Promise.all([
      this.prisma.client.findUnique({ where: { id: row.clientId }, select: { name: true } }),
      this.prisma.redirectUri.findMany({ where: { clientId: row.clientId }, select: { uri: true } }),
    ]);
    if (!client) return null;
    return {
      clientId: row.clientId,
      publicId,
      name: client.name,
      redirectUris: uris.map((entry) => entry.uri),
      fetchedAt: row.fetchedAt,
    };
  }

  async #fromDocument(url: string): Promise<Result<SigninClientInfo, OAuthError>> {
    const now = this.clock.now();
    const stored = await this.#row(url);
    if (stored?.fetchedAt && now - stored.fetchedAt.getTime() < METADATA_DOCUMENT_TTL_MS) {
      const { fetchedAt: _, ...info } = stored;
      return ok(info);
    }
    const fetched = await this.documents.fetch(url);
    if (!fetched.ok)
      return err(oauthError('invalid_client', `Client ID Metadata Document refused: ${fetched.error}.`));
    const { clientName, redirectUris } = fetched.value;
    const clientId = clientIdOfUrl(url);
    const at = new Date(now);
    await this.prisma.$transaction((tx) =>
      storeDocumentClient(tx, this.clock, { clientId, url, name: clientName, redirectUris, at }),
    );
    return ok({ clientId, publicId: url, name: clientName, redirectUris });
  }
}

/**
 * Writes the client a metadata document describes, and the audit events of what changed: the
 * client when first seen (`client.created`), then, on a fetch that finds the document changed,
 * `client.renamed` and each redirect URI added or removed. The client's row is locked first, so
 * servers refetching the same document at once record each change once.
 */
async function storeDocumentClient(
  tx: Prisma.TransactionClient,
  clock: Clock,
  doc: { clientId: string; url: string; name: string; redirectUris: string[]; at: Date },
): Promise<void> {
  const { clientId, url, name, redirectUris, at } = doc;
  const { count: created } = await tx.client.createMany({
    data: [{ id: clientId, name, createdAt: at }],
    skipDuplicates: true,
  });
  const [before] = await tx.$queryRaw<{ name: string }[]>`
    SELECT name FROM clients WHERE id = ${clientId} FOR UPDATE`;
  const held = created
    ? []
    : (await tx.redirectUri.findMany({ where: { clientId }, select: { uri: true } })).map((row) => row.uri);
  if (!created && before?.name !== name) {
    await tx.client.update({ where: { id: clientId }, data: { name }, select: { id: true } });
  }
  await tx.redirectUri.deleteMany({ where: { clientId, uri: { notIn: redirectUris } } });
  await tx.redirectUri.createMany({
    data: redirectUris.map((uri) => ({ clientId, uri, createdAt: at })),
    skipDuplicates: true,
  });
  await tx.signinClient.upsert({
    where: { clientId },
    create: { clientId, publicId: url, kind: 'metadata_document', fetchedAt: at, createdAt: at },
    update: { fetchedAt: at },
    select: { clientId: true },
  });
  // The document's URL answered for the client (CIMD): the server records what it read.
  const audit = (action: string, details: Record<string, unknown>) =>
    appendAuditIn(tx, clock, { actor: 'system', action, target: clientId, details });
  if (created) {
    await audit('client.created', { name, registration: 'metadata_document', url, redirectUris });
    return;
  }
  if (before?.name !== name) await audit('client.renamed', { name, url });
  for (const uri of redirectUris.filter((u) => !held.includes(u))) await audit('redirect_uri.added', { uri });
  for (const uri of held.filter((u) => !redirectUris.includes(u)))
    await audit('redirect_uri.removed', { uri });
}

function unknownClient(): OAuthError {
  return oauthError('invalid_client', 'The client_id names no registered client.');
}
