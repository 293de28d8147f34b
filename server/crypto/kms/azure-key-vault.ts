import { DefaultAzureCredential, type TokenCredential } from '@azure/identity';
import {
  CryptographyClient,
  type CryptographyClientOptions,
  type KeyVaultKey,
  parseKeyVaultKeyIdentifier,
} from '@azure/keyvault-keys';
import { LRUCache } from 'lru-cache';
import {
  type Kms,
  KmsConfigError,
  KmsKeyMismatchError,
  KmsUnavailableError,
  KmsUnwrapError,
  type WrappedKey,
} from './kms.ts';

/** Options of {@link createAzureKeyVaultKms}. */
export interface AzureKeyVaultKmsOptions {
  /**
   * The RSA key to wrap with (`AZURE_KEY_VAULT_KEY_ID`): `https://<vault>.vault.azure.net/keys/<name>`
   * to follow the key's current version, or `…/keys/<name>/<version>` to pin one.
   */
  keyId: string;
  /** Defaults to `DefaultAzureCredential` (environment, workload identity, managed identity, CLI…). */
  credential?: TokenCredential;
  /** Passed to every `CryptographyClient`; tests set `allowInsecureConnection` and
   * `disableChallengeResourceVerification` to talk to a loopback stand-in. */
  clientOptions?: CryptographyClientOptions;
}

/** A {@link Kms} backed by an RSA key in Azure Key Vault (or Managed HSM). */
export interface AzureKeyVaultKms extends Kms {
  readonly kind: 'azure-key-vault';
}

/** RSA-OAEP with SHA-256 and MGF1-SHA-256: Key Vault's recommended RSA wrap algorithm. */
const ALGORITHM = 'RSA-OAEP-256';
/** Distinct key versions with a cached client; old versions are only needed to unwrap old blobs. */
const MAX_VERSION_CLIENTS = 32;

/** A parsed key URL; `id` is its normalized form (origin, /keys/, name, version). */
interface KeyRef {
  id: string;
  vaultUrl: string;
  name: string;
  version: string | undefined;
}

/**
 * Creates the Azure Key Vault KMS. Data keys are wrapped and unwrapped by the vault with
 * `RSA-OAEP-256`; the private key never leaves it. The `keyId` stored with each blob is the
 * versioned key id the vault answered the wrap with, so after a rotation new blobs use the new
 * version while old blobs still unwrap with theirs.
 *
 * No request is made until the first wrap or unwrap; the vault is never asked for the key itself.
 *
 * @throws {KmsConfigError} when `keyId` is not a Key Vault key URL.
 * @example
 * ```ts
 * const kms = createAzureKeyVaultKms({ keyId: 'https://my-vault.vault.azure.net/keys/toolgate' });
 * ```
 */
export function createAzureKeyVaultKms(options: AzureKeyVaultKmsOptions): AzureKeyVaultKms {
  const configured = parseKeyRef(options.keyId);
  if (!configured) {
    throw new KmsConfigError(
      'AZURE_KEY_VAULT_KEY_ID',
      'AZURE_KEY_VAULT_KEY_ID must be a Key Vault key URL like https://<vault>.vault.azure.net/keys/<name>[/<version>]',
    );
  }
  const credential = options.credential ?? new DefaultAzureCredential();
  const clientFor = (ref: KeyRef) => vaultOnlyClient(ref, credential, options.clientOptions);
  const wrapClient = clientFor(configured);
  const unwrapClients = new LRUCache<string, CryptographyClient>({ max: MAX_VERSION_CLIENTS });

  return {
    kind: 'azure-key-vault',
    async wrapKey(dataKey: Buffer): Promise<WrappedKey> {
      let kid: unknown;
      let result: Awaited<ReturnType<CryptographyClient['wrapKey']>>;
      try {
        result = await wrapClient.wrapKey(ALGORITHM, dataKey, {
          // The SDK's result names the key id the client was made with (unversioned when the key
          // follows rotation); the vault's answer names the version that really wrapped.
          onResponse: (response) => {
            if (response.status === 200) kid = (response.parsedBody as { kid?: unknown } | undefined)?.kid;
          },
        });
      } catch (error) {
        throw vaultFailure('wrap', error);
      }
      const answered = typeof kid === 'string' ? parseKeyRef(kid) : undefined;
      if (!answered?.version || !sameKey(answered, configured)) {
        throw new KmsUnavailableError(
          'Key Vault answered the wrap without the versioned id of the configured key',
        );
      }
      if (configured.version && answered.version !== configured.version) {
        throw new KmsUnavailableError('Key Vault wrapped with another version than the pinned one');
      }
      return { keyId: answered.id, wrapped: Buffer.from(result.result) };
    },
    async unwrapKey(keyId: string, wrapped: Buffer): Promise<Buffer> {
      const stored = parseKeyRef(keyId);
      if (!stored?.version || !sameKey(stored, configured)) {
        throw new KmsKeyMismatchError(
          keyId.startsWith('local:')
            ? 'data key was wrapped by a local KEK, but this server uses Azure Key Vault'
            : `data key was wrapped by ${keyId}, not by a version of the configured key ${options.keyId}`,
        );
      }
      let client = unwrapClients.get(stored.id);
      if (!client) {
        client = clientFor(stored);
        unwrapClients.set(stored.id, client);
      }
      try {
        const result = await client.unwrapKey(ALGORITHM, wrapped);
        return Buffer.from(result.result);
      } catch (error) {
        throw vaultFailure('unwrap', error);
      }
    },
  };
}

/**
 * A client that sends every operation to the vault. Made from a key URL, the SDK would first GET
 * the key and then enforce, on its own, the expiry and key_ops of the version it got: a stale
 * check after a rotation, and one that refuses to unwrap under an expired version although Key
 * Vault allows that (expiry stops new wraps only). Made from a KeyVaultKey without key material,
 * it skips both and needs only the wrapKey and unwrapKey permissions; the vault decides.
 */
function vaultOnlyClient(
  ref: KeyRef,
  credential: TokenCredential,
  clientOptions: CryptographyClientOptions | undefined,
): CryptographyClient {
  const key: KeyVaultKey = {
    id: ref.id,
    name: ref.name,
    properties: { id: ref.id, name: ref.name, vaultUrl: ref.vaultUrl, version: ref.version },
  };
  return new CryptographyClient(key, credential, { ...clientOptions });
}

/** Parses a Key Vault key URL; undefined when it is not one. */
function parseKeyRef(keyId: string): KeyRef | undefined {
  try {
    const url = new URL(keyId);
    if (url.search || url.hash || url.username || url.password) return undefined;
    const parsed = parseKeyVaultKeyIdentifier(keyId);
    if (url.pathname.split('/')[1] !== 'keys' || !parsed.name) return undefined;
    const version = parsed.version || undefined;
    return {
      id: `${url.origin}/keys/${parsed.name}${version ? `/${version}` : ''}`,
      vaultUrl: url.origin,
      name: parsed.name,
      version,
    };
  } catch {
    return undefined;
  }
}

/** Key Vault names are case-insensitive; the vault is compared by origin. */
function sameKey(a: KeyRef, b: KeyRef): boolean {
  return a.vaultUrl === b.vaultUrl && a.name.toLowerCase() === b.name.toLowerCase();
}

/** Turns an SDK failure into a KmsError; the vault's status says whose fault it is. */
function vaultFailure(operation: 'wrap' | 'unwrap', error: unknown) {
  const status = statusOf(error);
  // 400 on unwrap: the vault holds the key but the ciphertext does not decrypt under it.
  if (operation === 'unwrap' && status === 400) {
    return new KmsUnwrapError('Key Vault could not unwrap the data key (400)', { cause: error });
  }
  const reason = status ? `Key Vault answered ${status}` : 'Key Vault could not be reached';
  return new KmsUnavailableError(`${operation} failed: ${reason}`, { cause: error });
}

function statusOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || !('statusCode' in error)) return undefined;
  return typeof error.statusCode === 'number' ? error.statusCode : undefined;
}
