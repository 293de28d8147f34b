import type { AzureKeyVaultKmsOptions } from './azure-key-vault.ts';
import { type Kms, KmsConfigError } from './kms.ts';
import { createLocalKms, type LocalKmsOptions } from './local.ts';

/** What `createKms` builds: the `KMS` setting with the options of that implementation. */
export type KmsOptions =
  | ({ kind: 'local' } & LocalKmsOptions)
  | ({ kind: 'azure-key-vault' } & AzureKeyVaultKmsOptions);

/**
 * Builds the configured KMS. The Azure SDK is loaded only when it is chosen, so the default
 * local setup starts without it.
 *
 * @throws {KmsConfigError} for a bad KEK, KEK file or key id.
 * @example
 * ```ts
 * const kms = await createKms(config.kms); // { kind: 'local', kek: undefined, kekPath: './.toolgate/kek' }
 * ```
 */
export async function createKms(options: KmsOptions): Promise<Kms> {
  switch (options.kind) {
    case 'local':
      return createLocalKms(options);
    case 'azure-key-vault': {
      const { createAzureKeyVaultKms } = await import('./azure-key-vault.ts');
      return createAzureKeyVaultKms(options);
    }
    default:
      // Reachable only from untyped callers; name the setting rather than return undefined.
      throw new KmsConfigError('KMS', 'KMS must be local or azure-key-vault');
  }
}
