/**
 * The key-management service behind envelope encryption: it wraps (encrypts) and unwraps the
 * per-blob data keys with a key-encryption key it holds. Two implementations: `local.ts` (a
 * 32-byte KEK on this machine) and `azure-key-vault.ts` (an RSA key in Azure Key Vault).
 */

/** Which implementation a {@link Kms} is; also the `KMS` configuration value. */
export type KmsKind = 'local' | 'azure-key-vault';

/** A data key wrapped by the KMS, with the id of the exact key (version) that wrapped it. */
export interface WrappedKey {
  /** Stored beside the wrapped key; `unwrapKey` needs it back. Never secret. */
  keyId: string;
  wrapped: Buffer;
}

/**
 * Wraps and unwraps data keys. Implementations never log, return or put in an error message
 * the data key or the key-encryption key.
 *
 * @example
 * ```ts
 * const { keyId, wrapped } = await kms.wrapKey(dataKey);
 * const same = await kms.unwrapKey(keyId, wrapped); // same.equals(dataKey)
 * ```
 */
export interface Kms {
  readonly kind: KmsKind;
  /** Encrypts `dataKey` under the current key-encryption key. Rejects with a {@link KmsError}. */
  wrapKey(dataKey: Buffer): Promise<WrappedKey>;
  /**
   * Decrypts a wrapped data key. Rejects with {@link KmsKeyMismatchError} when `keyId` names a
   * key this KMS does not hold, {@link KmsUnwrapError} when the wrapped bytes do not decrypt.
   */
  unwrapKey(keyId: string, wrapped: Buffer): Promise<Buffer>;
}

/** The fixed codes of {@link KmsError}, one per subclass. */
export type KmsErrorCode = 'KMS_CONFIG' | 'KMS_KEY_MISMATCH' | 'KMS_UNWRAP_FAILED' | 'KMS_UNAVAILABLE';

/**
 * Base class of every KMS failure: a fixed string `code` to branch on and the native `cause`.
 * Messages name keys by id or fingerprint only, never by material.
 */
export abstract class KmsError extends Error {
  abstract readonly code: KmsErrorCode;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * The KMS is configured wrongly (bad `LOCAL_KEK`, unusable KEK file, malformed key id).
 * `setting` names the configuration variable to fix.
 */
export class KmsConfigError extends KmsError {
  readonly code = 'KMS_CONFIG';

  constructor(
    readonly setting: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The wrapped key names a key-encryption key this KMS does not hold (another KEK, vault or key). */
export class KmsKeyMismatchError extends KmsError {
  readonly code = 'KMS_KEY_MISMATCH';
}

/** The KMS holds the key but the wrapped bytes do not decrypt under it: corrupt or tampered. */
export class KmsUnwrapError extends KmsError {
  readonly code = 'KMS_UNWRAP_FAILED';
}

/** The KMS could not do the operation: unreachable, refused, or answered something unusable. */
export class KmsUnavailableError extends KmsError {
  readonly code = 'KMS_UNAVAILABLE';
}
