import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createKms, type KmsOptions } from '../../server/crypto/envelope.ts';
import { errorShape, rejectionOf } from './kms-doubles.ts';

describe('createKms', () => {
  it('builds the local KMS', async () => {
    const kms = await createKms({
      kind: 'local',
      kek: randomBytes(32).toString('base64'),
      kekPath: '/nonexistent',
    });
    expect(kms.kind).toBe('local');
  });

  it('builds the Azure Key Vault KMS without contacting the vault', async () => {
    const kms = await createKms({
      kind: 'azure-key-vault',
      keyId: 'https://my-vault.vault.azure.net/keys/toolgate',
      credential: { getToken: () => Promise.reject(new Error('must not be called')) },
    });
    expect(kms.kind).toBe('azure-key-vault');
  });

  it('refuses an unknown kind from an untyped caller', async () => {
    const options = { kind: 'vault', kekPath: '/nonexistent' } as unknown as KmsOptions;
    expect({ ...errorShape(await rejectionOf(createKms(options))) }).toEqual({
      name: 'KmsConfigError',
      code: 'KMS_CONFIG',
      message: 'KMS must be local or azure-key-vault',
    });
  });
});
