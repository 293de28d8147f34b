import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { KEK_BYTES, loadOrCreateKekFile } from './kek-file.ts';
import { type Kms, KmsConfigError, KmsKeyMismatchError, KmsUnwrapError, type WrappedKey } from './kms.ts';

/** Options of {@link createLocalKms}. */
export interface LocalKmsOptions {
  /** Base64 of exactly 32 bytes (`LOCAL_KEK`). When set, `kekPath` is neither read nor created. */
  kek?: string;
  /** Where the generated KEK lives when `kek` is unset, e.g. `./.toolgate/kek`. */
  kekPath: string;
}

/** A {@link Kms} holding one local key-encryption key. */
export interface LocalKms extends Kms {
  readonly kind: 'local';
  /** `local:` + a 16-hex fingerprint of the KEK; not secret, safe to log. */
  readonly keyId: string;
}

const KEY_ID_PREFIX = 'local:';
const FINGERPRINT_LABEL = 'toolgate/local-kek/fingerprint/v1\0';
const WRAP_AAD_LABEL = 'toolgate/local-kek/wrap/v1\0';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Standard base64 of 32 bytes: 43 characters, the last carrying 2 zero bits, optional padding. */
const KEK_BASE64 = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=?$/;

/**
 * Creates the local KMS: data keys are wrapped with AES-256-GCM under a 32-byte KEK taken from
 * `kek` (base64) or from the file at `kekPath`, generated there once (mode 0600) when missing.
 *
 * Wrapped form: `iv (12) ‖ ciphertext ‖ tag (16)`; the additional data binds it to this KEK's
 * fingerprint. A blob whose `keyId` names another KEK fails with {@link KmsKeyMismatchError}
 * before any decryption is tried.
 *
 * @throws {KmsConfigError} for a `kek` that is not base64 of 32 bytes, or an unusable KEK file.
 * @example
 * ```ts
 * const kms = await createLocalKms({ kek: process.env.LOCAL_KEK, kekPath: './.toolgate/kek' });
 * ```
 */
export async function createLocalKms(options: LocalKmsOptions): Promise<LocalKms> {
  const kek = options.kek !== undefined ? parseKek(options.kek) : await loadOrCreateKekFile(options.kekPath);
  const keyId = KEY_ID_PREFIX + fingerprint(kek);
  const aad = Buffer.from(WRAP_AAD_LABEL + keyId, 'utf8');

  return {
    kind: 'local',
    keyId,
    async wrapKey(dataKey: Buffer): Promise<WrappedKey> {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', kek, iv).setAAD(aad);
      const body = Buffer.concat([cipher.update(dataKey), cipher.final()]);
      return { keyId, wrapped: Buffer.concat([iv, body, cipher.getAuthTag()]) };
    },
    async unwrapKey(wrappedKeyId: string, wrapped: Buffer): Promise<Buffer> {
      if (wrappedKeyId !== keyId) {
        throw new KmsKeyMismatchError(
          `data key was wrapped by ${describeKeyId(wrappedKeyId)}, but this server's local KEK is ${keyId}`,
        );
      }
      if (wrapped.length <= IV_BYTES + TAG_BYTES) {
        throw new KmsUnwrapError(`wrapped data key is too short (${wrapped.length} bytes)`);
      }
      const decipher = createDecipheriv('aes-256-gcm', kek, wrapped.subarray(0, IV_BYTES)).setAAD(aad);
      decipher.setAuthTag(wrapped.subarray(wrapped.length - TAG_BYTES));
      try {
        const body = wrapped.subarray(IV_BYTES, wrapped.length - TAG_BYTES);
        return Buffer.concat([decipher.update(body), decipher.final()]);
      } catch (error) {
        throw new KmsUnwrapError(`wrapped data key failed authentication under local KEK ${keyId}`, {
          cause: error,
        });
      }
    },
  };
}

/**
 * Decodes a `LOCAL_KEK` value: canonical standard base64 of exactly 32 bytes (surrounding
 * whitespace allowed). Anything else is a configuration error, never a silently shorter key.
 */
export function parseKek(value: string): Buffer {
  const text = value.trim();
  if (!KEK_BASE64.test(text)) {
    throw new KmsConfigError(
      'LOCAL_KEK',
      'LOCAL_KEK must be the base64 of exactly 32 bytes (generate one with: openssl rand -base64 32)',
    );
  }
  const kek = Buffer.from(text, 'base64');
  // Unreachable when the pattern holds; kept so a future pattern change cannot weaken the key.
  if (kek.length !== KEK_BYTES) throw new KmsConfigError('LOCAL_KEK', 'LOCAL_KEK must decode to 32 bytes');
  return kek;
}

/** First 16 hex digits of SHA-256(label ‖ KEK): names the KEK without revealing anything of it. */
function fingerprint(kek: Buffer): string {
  return createHash('sha256').update(FINGERPRINT_LABEL).update(kek).digest('hex').slice(0, 16);
}

function describeKeyId(keyId: string): string {
  if (keyId.startsWith(KEY_ID_PREFIX)) return `local KEK ${keyId}`;
  if (/^https?:\/\//.test(keyId)) return 'an Azure Key Vault key';
  return 'an unknown KMS';
}
