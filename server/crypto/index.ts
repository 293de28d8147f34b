/** Envelope encryption of secrets at rest: the public surface of `server/crypto`. */
export { BLOB_FORMAT_VERSION } from './blob.ts';
export { createEnvelope, type Envelope, type EnvelopeOptions } from './envelope.ts';
export { EnvelopeError, type EnvelopeErrorCode } from './envelope-error.ts';
export { createKms, type KmsOptions } from './kms/create-kms.ts';
export {
  type Kms,
  KmsConfigError,
  KmsError,
  type KmsErrorCode,
  KmsKeyMismatchError,
  type KmsKind,
  KmsUnavailableError,
  KmsUnwrapError,
  type WrappedKey,
} from './kms/kms.ts';
export { createLocalKms, type LocalKms, type LocalKmsOptions, parseKek } from './kms/local.ts';
