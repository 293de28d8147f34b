/**
 * A loopback stand-in for Azure Key Vault speaking its REST protocol, enough for
 * `@azure/keyvault-keys`' CryptographyClient: the bearer challenge, GET key (JSON Web Key),
 * and POST wrapkey/unwrapkey with real RSA-OAEP(-256) under real 2048-bit key pairs.
 *
 * What the SDK does, read from its source (keyvault-keys 4.10, keyvault-common):
 * - the first request of each client goes out without a token and with its body removed; a 401
 *   with `WWW-Authenticate: Bearer authorization="…/<tenant>", resource="…"` makes it ask the
 *   credential for `<resource>/.default` in `<tenant>` and resend with `Authorization: Bearer`;
 * - a client made from a key URL first GETs `/keys/<name>/<version>` (version empty when
 *   unpinned, so the path ends in `/`) and checks `key_ops`; RSA-OAEP-256 is never done locally,
 *   so it then POSTs `/keys/<name>/<version>/wrapkey` (`//wrapkey` when unpinned);
 * - every request carries `?api-version=…` and JSON bodies `{ alg, value }`, value base64url.
 * toolgate's KMS makes its clients from key objects without key material, so it never GETs; the
 * GET route serves the SDK's default path.
 *
 * A version past its `exp` refuses wrapkey (403) but still unwraps, as Key Vault documents for
 * expired keys. Not modelled: disabled keys, `nbf`, key types other than RSA, CAE claims
 * challenges.
 */
import {
  constants,
  generateKeyPair,
  type KeyObject,
  privateDecrypt,
  publicEncrypt,
  randomBytes,
} from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AccessToken, GetTokenOptions, TokenCredential } from '@azure/identity';

/** The tenant named in the stand-in's challenge. */
export const STAND_IN_TENANT = '00000000-0000-4000-8000-00000000cafe';
/** The resource named in the challenge; the credential is asked for `<resource>/.default`. */
export const STAND_IN_RESOURCE = 'https://vault.azure.net';
/** The only bearer token the stand-in accepts. */
export const STAND_IN_TOKEN = 'stand-in-access-token';

/** One request as the stand-in saw and answered it. */
export interface RecordedRequest {
  method: string;
  /** Path without the query, e.g. `/keys/toolgate//wrapkey`. */
  path: string;
  apiVersion: string | null;
  authorization: string | undefined;
  /** Parsed JSON body, or undefined for none. */
  body: unknown;
  status: number;
  /** Parsed JSON answer. */
  response: unknown;
}

/** A running stand-in. */
export interface KeyVaultStandIn {
  /** The vault URL, `http://127.0.0.1:<port>`. */
  url: string;
  /** Unversioned key URL, what `AZURE_KEY_VAULT_KEY_ID` would hold. */
  keyId(name?: string): string;
  /** Versioned key id of the key's current version. */
  currentKeyId(name?: string): string;
  /** Creates a key (one version). Resolves to its versioned id. */
  createKey(name: string, options?: KeyVersionOptions): Promise<string>;
  /** Adds a new version to a key, which becomes current. Resolves to its versioned id. */
  rotate(name?: string, options?: KeyVersionOptions): Promise<string>;
  /** Every request so far, in arrival order. */
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** Attributes of a new key version. */
export interface KeyVersionOptions {
  /** The version's `exp` attribute: after it, wrapkey is refused and unwrapkey still works. */
  expiresOn?: Date;
}

/** Client options a CryptographyClient needs to talk to the stand-in (no TLS, loopback host). */
export const STAND_IN_CLIENT_OPTIONS = {
  allowInsecureConnection: true,
  disableChallengeResourceVerification: true,
  retryOptions: { maxRetries: 0 },
};

/** A TokenCredential that hands out {@link STAND_IN_TOKEN} and records what it was asked for. */
export interface StaticTokenCredential extends TokenCredential {
  calls: Array<{ scopes: string[]; tenantId: string | undefined }>;
}

interface KeyVersion {
  kid: string;
  privateKey: KeyObject;
  jwk: { n: string; e: string };
  created: number;
  expires: number | undefined;
}

const DEFAULT_KEY = 'toolgate';

/** Creates a credential for the stand-in (any real credential would do the same job in Azure). */
export function staticTokenCredential(token = STAND_IN_TOKEN): StaticTokenCredential {
  const calls: StaticTokenCredential['calls'] = [];
  return {
    calls,
    async getToken(scopes: string | string[], options?: GetTokenOptions): Promise<AccessToken> {
      calls.push({ scopes: [scopes].flat(), tenantId: options?.tenantId });
      return { token, expiresOnTimestamp: Date.now() + 3600_000, tokenType: 'Bearer' };
    },
  };
}

/**
 * Starts the stand-in on 127.0.0.1 with one RSA key named `toolgate`.
 *
 * @example
 * ```ts
 * const vault = await startKeyVaultStandIn();
 * const kms = createAzureKeyVaultKms({ keyId: vault.keyId(), credential: staticTokenCredential(),
 *   clientOptions: { allowInsecureConnection: true, disableChallengeResourceVerification: true } });
 * ```
 */
export async function startKeyVaultStandIn(): Promise<KeyVaultStandIn> {
  const keys = new Map<string, KeyVersion[]>();
  const requests: RecordedRequest[] = [];
  let url = '';

  async function addVersion(name: string, options: KeyVersionOptions = {}): Promise<string> {
    const { publicKey, privateKey } = await generateKeyPairAsync();
    const jwk = publicKey.export({ format: 'jwk' });
    const version = randomBytes(16).toString('hex');
    const entry: KeyVersion = {
      kid: `${url}/keys/${name}/${version}`,
      privateKey,
      jwk: { n: String(jwk.n), e: String(jwk.e) },
      created: Math.floor(Date.now() / 1000),
      expires: options.expiresOn ? Math.floor(options.expiresOn.getTime() / 1000) : undefined,
    };
    const versions = keys.get(name.toLowerCase()) ?? [];
    versions.push(entry);
    keys.set(name.toLowerCase(), versions);
    return entry.kid;
  }

  function find(name: string, version: string): KeyVersion | undefined {
    const versions = keys.get(name.toLowerCase());
    if (!version) return versions?.at(-1);
    return versions?.find((v) => v.kid.endsWith(`/${version}`));
  }

  async function handle(
    req: IncomingMessage,
  ): Promise<{ status: number; body: unknown; headers?: Record<string, string> }> {
    const target = new URL(req.url ?? '/', 'http://stand-in');
    const auth = req.headers.authorization;
    if (auth !== `Bearer ${STAND_IN_TOKEN}`) {
      return {
        status: 401,
        headers: {
          'www-authenticate': `Bearer authorization="https://login.microsoftonline.com/${STAND_IN_TENANT}", resource="${STAND_IN_RESOURCE}"`,
        },
        body: kvError(
          'Unauthorized',
          auth ? 'AKV10032: Invalid issuer.' : 'AKV10000: Request is missing a Bearer or PoP token.',
        ),
      };
    }
    if (!target.searchParams.get('api-version')) {
      return { status: 400, body: kvError('BadParameter', 'The api-version query parameter is missing.') };
    }
    const [, collection, name = '', version = '', operation, ...rest] = target.pathname.split('/');
    if (collection !== 'keys' || !name || rest.length > 0)
      return { status: 404, body: kvError('NotFound', 'No route.') };
    const key = find(name, version);
    if (!key) {
      return {
        status: 404,
        body: kvError(
          'KeyNotFound',
          `A key with (name/id) ${name}/${version} was not found in this key vault.`,
        ),
      };
    }
    if (req.method === 'GET' && operation === undefined) return { status: 200, body: keyBundle(key) };
    if (req.method === 'POST' && (operation === 'wrapkey' || operation === 'unwrapkey')) {
      const body = (await readJson(req)) as { alg?: unknown; value?: unknown } | undefined;
      const oaepHash =
        body?.alg === 'RSA-OAEP-256' ? 'sha256' : body?.alg === 'RSA-OAEP' ? 'sha1' : undefined;
      if (!oaepHash || typeof body?.value !== 'string') {
        return { status: 400, body: kvError('BadParameter', 'Invalid algorithm or value.') };
      }
      // Expiry stops new wraps; unwrapping under an expired version stays allowed.
      if (operation === 'wrapkey' && key.expires !== undefined && key.expires * 1000 <= Date.now()) {
        return {
          status: 403,
          body: kvError('Forbidden', 'Operation wrapKey is not allowed on an expired key.'),
        };
      }
      const input = Buffer.from(body.value, 'base64url');
      const rsa = { padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash };
      try {
        const output =
          operation === 'wrapkey'
            ? publicEncrypt({ key: key.privateKey, ...rsa }, input)
            : privateDecrypt({ key: key.privateKey, ...rsa }, input);
        return { status: 200, body: { kid: key.kid, value: output.toString('base64url') } };
      } catch {
        return { status: 400, body: kvError('BadParameter', 'Error while performing the operation.') };
      }
    }
    return { status: 405, body: kvError('MethodNotAllowed', 'Method not allowed.') };
  }

  const server = createServer((req, res) => {
    void respond(req, res);
  });

  async function respond(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const record: RecordedRequest = {
      method: req.method ?? '',
      path: new URL(req.url ?? '/', 'http://stand-in').pathname,
      apiVersion: new URL(req.url ?? '/', 'http://stand-in').searchParams.get('api-version'),
      authorization: req.headers.authorization,
      body: undefined,
      status: 0,
      response: undefined,
    };
    requests.push(record);
    let answer: Awaited<ReturnType<typeof handle>>;
    try {
      const bodyText = await peekBody(req);
      record.body = bodyText ? JSON.parse(bodyText) : undefined;
      answer = await handle(req);
    } catch {
      answer = { status: 400, body: kvError('BadParameter', 'Malformed request.') };
    }
    record.status = answer.status;
    record.response = answer.body;
    res.writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8', ...answer.headers });
    res.end(JSON.stringify(answer.body));
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await addVersion(DEFAULT_KEY);

  return {
    url,
    keyId: (name = DEFAULT_KEY) => `${url}/keys/${name}`,
    currentKeyId(name = DEFAULT_KEY) {
      const current = find(name, '');
      if (!current) throw new Error(`stand-in has no key ${name}`);
      return current.kid;
    },
    createKey: (name, options) => addVersion(name, options),
    async rotate(name = DEFAULT_KEY, options) {
      if (!keys.has(name.toLowerCase())) throw new Error(`stand-in has no key ${name}`);
      return addVersion(name, options);
    },
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

function keyBundle(key: KeyVersion) {
  return {
    key: {
      kid: key.kid,
      kty: 'RSA',
      key_ops: ['encrypt', 'decrypt', 'wrapKey', 'unwrapKey'],
      n: key.jwk.n,
      e: key.jwk.e,
    },
    attributes: {
      enabled: true,
      created: key.created,
      updated: key.created,
      ...(key.expires === undefined ? {} : { exp: key.expires }),
      recoveryLevel: 'Recoverable+Purgeable',
      recoverableDays: 90,
      exportable: false,
    },
    tags: {},
  };
}

function kvError(code: string, message: string) {
  return { error: { code, message } };
}

function generateKeyPairAsync(): Promise<{ publicKey: KeyObject; privateKey: KeyObject }> {
  return new Promise((resolve, reject) =>
    generateKeyPair('rsa', { modulusLength: 2048 }, (error, publicKey, privateKey) =>
      error ? reject(error) : resolve({ publicKey, privateKey }),
    ),
  );
}

/** Reads the body once and keeps it on the request, so both the recorder and the handler see it. */
const bodies = new WeakMap<IncomingMessage, Promise<string>>();

function peekBody(req: IncomingMessage): Promise<string> {
  let body = bodies.get(req);
  if (!body) {
    body = new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      req.on('error', reject);
    });
    bodies.set(req, body);
  }
  return body;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const text = await peekBody(req);
  return text ? JSON.parse(text) : undefined;
}
