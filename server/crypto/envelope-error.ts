import { KmsError } from './kms/kms.ts';

/** The fixed codes of {@link EnvelopeError}. */
export type EnvelopeErrorCode =
  /** Not an envelope, an unknown format version, or truncated. */
  | 'ENVELOPE_FORMAT'
  /** Authentication failed: the wrong context, or a modified blob (also a modified wrapped key). */
  | 'ENVELOPE_AUTH_FAILED'
  /** The blob was sealed under a key-encryption key this server's KMS does not hold. */
  | 'KMS_KEY_MISMATCH'
  /** The KMS failed to wrap or unwrap (unreachable, refused, bad answer); may be transient. */
  | 'KMS_UNAVAILABLE';

/**
 * Why a blob could not be sealed or opened. Carries a fixed `code` and the native `cause`;
 * the message never holds plaintext, key material or the context.
 */
export class EnvelopeError extends Error {
  constructor(
    readonly code: EnvelopeErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Maps a KMS failure to the envelope's vocabulary, keeping the original as `cause`. */
export function envelopeErrorFromKms(error: unknown, operation: 'wrap' | 'unwrap'): EnvelopeError {
  if (error instanceof EnvelopeError) return error;
  if (!(error instanceof KmsError)) {
    // An unknown error's message is not ours to vouch for: keep it only as the cause.
    return new EnvelopeError('KMS_UNAVAILABLE', `KMS failed to ${operation} the data key`, { cause: error });
  }
  switch (error.code) {
    case 'KMS_KEY_MISMATCH':
      return new EnvelopeError('KMS_KEY_MISMATCH', error.message, { cause: error });
    case 'KMS_UNWRAP_FAILED':
      return new EnvelopeError(
        'ENVELOPE_AUTH_FAILED',
        'the wrapped data key did not decrypt: the blob is corrupt or was modified',
        { cause: error },
      );
    default:
      return new EnvelopeError(
        'KMS_UNAVAILABLE',
        `KMS failed to ${operation} the data key: ${error.message}`,
        {
          cause: error,
        },
      );
  }
}
