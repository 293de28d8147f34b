import { randomBytes } from 'node:crypto';
import { CryptographyClient } from '@azure/keyvault-keys';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { decodeBlob } from '../../server/crypto/blob.ts';
import { createEnvelope } from '../../server/crypto/envelope.ts';
import {
  type AzureKeyVaultKmsOptions,
  createAzureKeyVaultKms,
} from '../../server/crypto/kms/azure-key-vault.ts';
import {
  type KeyVaultStandIn,
  STAND_IN_CLIENT_OPTIONS,
  STAND_IN_TENANT,
  STAND_IN_TOKEN,
  startKeyVaultStandIn,
  staticTokenCredential,
} from '../support/keyvault.ts';
import { errorShape, freshLocalKms, rejectionOf, spyKms } from './kms-doubles.ts';

const CONTEXT = 'connection:client-1:user-1:github';
const VERSIONED = /^http:\/\/127\.0\.0\.1:\d+\/keys\/toolgate\/[0-9a-f]{32}$/;

let vault: KeyVaultStandIn;
beforeAll(async () => {
  vault = await startKeyVaultStandIn();
});
afterAll(async () => {
  await vault.close();
});

/** A KMS for the stand-in; every call gets its own credential and SDK clients. */
function vaultKms(overrides: Partial<AzureKeyVaultKmsOptions> = {}) {
  const credential = staticTokenCredential();
  const kms = createAzureKeyVaultKms({
    keyId: vault.keyId(),
    credential,
    clientOptions: STAND_IN_CLIENT_OPTIONS,
    ...overrides,
  });
  return { kms, credential };
}

/** Requests made by the block, as method, path, status and whether a token was sent. */
async function trace<T>(block: () => Promise<T>) {
  const from = vault.requests.length;
  const result = await block();
  const requests = vault.requests.slice(from);
  return {
    result,
    requests,
    lines: requests.map((r) => `${r.method} ${r.path} ${r.status}${r.authorization ? ' token' : ''}`),
  };
}

describe('Azure Key Vault KMS against the stand-in', () => {
  it('answers the challenge, then wraps and unwraps with the versioned key', async () => {
    const { kms, credential } = vaultKms();
    const envelope = createEnvelope({ kms });
    const version = vault.currentKeyId().split('/').at(-1);
    const sealed = await trace(() => envelope.seal('gho_token', CONTEXT));
    // The SDK's first request goes without a token and without its body (the data key).
    expect(sealed.lines).toEqual([
      'POST /keys/toolgate//wrapkey 401',
      'POST /keys/toolgate//wrapkey 200 token',
    ]);
    expect(sealed.requests[0]?.body).toBe(undefined);
    const opened = await trace(() => envelope.openString(sealed.result, CONTEXT));
    expect(opened.result).toBe('gho_token');
    expect(opened.lines).toEqual([
      `POST /keys/toolgate/${version}/unwrapkey 401`,
      `POST /keys/toolgate/${version}/unwrapkey 200 token`,
    ]);
    expect(opened.requests[0]?.body).toBe(undefined);
    expect(sealed.requests[0]?.response).toEqual({
      error: { code: 'Unauthorized', message: 'AKV10000: Request is missing a Bearer or PoP token.' },
    });
    expect([...sealed.requests, ...opened.requests].map((r) => r.apiVersion)).toEqual(
      Array(4).fill('2025-07-01'),
    );
    expect(sealed.requests[1]?.authorization).toBe(`Bearer ${STAND_IN_TOKEN}`);
    expect(credential.calls).toEqual([
      { scopes: ['https://vault.azure.net/.default'], tenantId: STAND_IN_TENANT },
      { scopes: ['https://vault.azure.net/.default'], tenantId: STAND_IN_TENANT },
    ]);
  });

  it('stores the full versioned key id the vault answered with', async () => {
    const { kms } = vaultKms();
    const blob = await createEnvelope({ kms }).seal('token', CONTEXT);
    const { keyId, wrapped } = decodeBlob(blob);
    expect(keyId).toBe(vault.currentKeyId());
    expect(keyId).toMatch(VERSIONED);
    expect(wrapped.length).toBe(256); // RSA-2048 ciphertext
  });

  it('sends the vault the data key only, never the plaintext', async () => {
    const spy = spyKms(vaultKms().kms);
    const envelope = createEnvelope({ kms: spy.kms });
    const secret = `refresh-${randomBytes(12).toString('hex')}`;
    const { result: blob, requests } = await trace(async () => {
      const sealed = await envelope.seal(secret, CONTEXT);
      await envelope.open(sealed, CONTEXT);
      return sealed;
    });
    const wrapRequest = requests.find((r) => r.path.endsWith('/wrapkey') && r.status === 200);
    const unwrapRequest = requests.find((r) => r.path.endsWith('/unwrapkey') && r.status === 200);
    const dataKey = spy.calls.dataKeys[0] as Buffer;
    const { wrapped } = decodeBlob(blob);
    expect(wrapRequest?.body).toEqual({ alg: 'RSA-OAEP-256', value: dataKey.toString('base64url') });
    expect(unwrapRequest?.body).toEqual({ alg: 'RSA-OAEP-256', value: wrapped.toString('base64url') });
    expect(unwrapRequest?.response).toEqual({
      kid: decodeBlob(blob).keyId,
      value: dataKey.toString('base64url'),
    });
    const everything = JSON.stringify(requests);
    for (const encoding of ['utf8', 'base64', 'base64url', 'hex'] as const) {
      expect(everything.includes(Buffer.from(secret).toString(encoding))).toBe(false);
    }
    expect(blob.includes(dataKey)).toBe(false);
  });

  it('wraps new blobs with the new version after a rotation and still opens old ones', async () => {
    const { kms } = vaultKms();
    const envelope = createEnvelope({ kms, dataKeyCacheTtlMs: 0 });
    const before = await envelope.seal('old secret', CONTEXT);
    const oldKeyId = vault.currentKeyId();
    const newKeyId = await vault.rotate();
    const after = await envelope.seal('new secret', CONTEXT);
    expect(newKeyId).not.toBe(oldKeyId);
    expect([decodeBlob(before).keyId, decodeBlob(after).keyId]).toEqual([oldKeyId, newKeyId]);
    const { lines } = await trace(async () => {
      expect(await envelope.openString(before, CONTEXT)).toBe('old secret');
      expect(await envelope.openString(after, CONTEXT)).toBe('new secret');
    });
    expect(lines.filter((line) => line.includes(' 200 '))).toEqual([
      `POST /keys/toolgate/${oldKeyId.split('/').at(-1)}/unwrapkey 200 token`,
      `POST /keys/toolgate/${newKeyId.split('/').at(-1)}/unwrapkey 200 token`,
    ]);
    // A server started after the rotation opens both, too.
    const fresh = createEnvelope({ kms: vaultKms().kms });
    expect(await fresh.openString(before, CONTEXT)).toBe('old secret');
  });

  it('wraps with the current version and unwraps under an expired one after a rotation', async () => {
    const hour = 3600_000;
    const first = await vault.createKey('expiring', { expiresOn: new Date(Date.now() + hour) });
    const envelope = createEnvelope({
      kms: vaultKms({ keyId: vault.keyId('expiring') }).kms,
      dataKeyCacheTtlMs: 0,
    });
    const early = await envelope.seal('early', CONTEXT);
    const second = await vault.rotate('expiring');
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 2 * hour });
    try {
      const late = await envelope.seal('late', CONTEXT);
      expect([decodeBlob(early).keyId, decodeBlob(late).keyId]).toEqual([first, second]);
      expect(await envelope.openString(early, CONTEXT)).toBe('early');
      const pinnedToExpired = createEnvelope({ kms: vaultKms({ keyId: first }).kms });
      expect(errorShape(await rejectionOf(pinnedToExpired.seal('x', CONTEXT)))).toEqual({
        name: 'EnvelopeError',
        code: 'KMS_UNAVAILABLE',
        message: 'KMS failed to wrap the data key: wrap failed: Key Vault answered 403',
      });
    } finally {
      vi.useRealTimers();
    }
  });

  it('keeps wrapping with a pinned version after a rotation', async () => {
    const pinned = vault.currentKeyId();
    const { kms } = vaultKms({ keyId: pinned });
    await vault.rotate();
    const blob = await createEnvelope({ kms }).seal('token', CONTEXT);
    expect(decodeBlob(blob).keyId).toBe(pinned);
    expect(vault.currentKeyId()).not.toBe(pinned);
  });

  it('refuses blobs wrapped by another key, another vault or the local KMS', async () => {
    const envelope = createEnvelope({ kms: vaultKms().kms });
    const otherKeyId = await vault.createKey('other');
    const otherKey = await createEnvelope({ kms: vaultKms({ keyId: vault.keyId('other') }).kms }).seal(
      'x',
      CONTEXT,
    );
    expect(errorShape(await rejectionOf(envelope.open(otherKey, CONTEXT)))).toEqual({
      name: 'EnvelopeError',
      code: 'KMS_KEY_MISMATCH',
      message: `data key was wrapped by ${otherKeyId}, not by a version of the configured key ${vault.keyId()}`,
    });
    const local = await createEnvelope({ kms: await freshLocalKms() }).seal('x', CONTEXT);
    expect(errorShape(await rejectionOf(envelope.open(local, CONTEXT)))).toEqual({
      name: 'EnvelopeError',
      code: 'KMS_KEY_MISMATCH',
      message: 'data key was wrapped by a local KEK, but this server uses Azure Key Vault',
    });
    const fromVault = await envelope.seal('x', CONTEXT);
    const localEnvelope = createEnvelope({ kms: await freshLocalKms() });
    expect(errorShape(await rejectionOf(localEnvelope.open(fromVault, CONTEXT)))).toMatchObject({
      code: 'KMS_KEY_MISMATCH',
    });
    const elsewhere = createEnvelope({
      kms: vaultKms({ keyId: 'https://elsewhere.vault.azure.net/keys/toolgate' }).kms,
    });
    const { lines } = await trace(() => rejectionOf(elsewhere.open(fromVault, CONTEXT)));
    expect(lines).toEqual([]); // refused before any request
  });

  it('reports a modified wrapped key as ENVELOPE_AUTH_FAILED', async () => {
    const envelope = createEnvelope({ kms: vaultKms().kms });
    const blob = await envelope.seal('token', CONTEXT);
    const wrappedStart = blob.length - 16 - 12 - 5 - 256;
    blob[wrappedStart + 100] = (blob[wrappedStart + 100] as number) ^ 0x01;
    const { result: error, lines } = await trace(() => rejectionOf(envelope.open(blob, CONTEXT)));
    expect(errorShape(error)).toEqual({
      name: 'EnvelopeError',
      code: 'ENVELOPE_AUTH_FAILED',
      message: 'the wrapped data key did not decrypt: the blob is corrupt or was modified',
    });
    expect(lines.at(-1)).toMatch(/^POST \/keys\/toolgate\/[0-9a-f]{32}\/unwrapkey 400 token$/);
  });

  it('reports a refused token and an unreachable vault as KMS_UNAVAILABLE', async () => {
    const refused = createEnvelope({
      kms: vaultKms({ credential: staticTokenCredential('wrong-token') }).kms,
    });
    expect(errorShape(await rejectionOf(refused.seal('token', CONTEXT)))).toEqual({
      name: 'EnvelopeError',
      code: 'KMS_UNAVAILABLE',
      message: 'KMS failed to wrap the data key: wrap failed: Key Vault answered 401',
    });
    const gone = await startKeyVaultStandIn();
    const keyId = gone.keyId();
    await gone.close();
    const unreachable = createEnvelope({ kms: vaultKms({ keyId }).kms });
    expect(errorShape(await rejectionOf(unreachable.seal('token', CONTEXT)))).toEqual({
      name: 'EnvelopeError',
      code: 'KMS_UNAVAILABLE',
      message: 'KMS failed to wrap the data key: wrap failed: Key Vault could not be reached',
    });
  });

  it.each([
    'not a url',
    'https://my-vault.vault.azure.net/secrets/toolgate',
    'https://my-vault.vault.azure.net/keys/',
    'https://my-vault.vault.azure.net/keys/toolgate/v1/extra',
    'https://my-vault.vault.azure.net/keys/toolgate?x=1',
  ])('refuses the key id %s as a configuration error', (keyId) => {
    let error: unknown;
    try {
      vaultKms({ keyId });
    } catch (thrown) {
      error = thrown;
    }
    expect({ ...errorShape(error), setting: (error as { setting?: string }).setting }).toEqual({
      name: 'KmsConfigError',
      code: 'KMS_CONFIG',
      message:
        'AZURE_KEY_VAULT_KEY_ID must be a Key Vault key URL like https://<vault>.vault.azure.net/keys/<name>[/<version>]',
      setting: 'AZURE_KEY_VAULT_KEY_ID',
    });
  });

  it("serves the SDK's default path, whose reported key id goes stale after a rotation", async () => {
    // Why the KMS reads the vault's answer: a client made from a key URL reports the version it
    // fetched first, while the vault wraps with the current one.
    const name = 'sdk-default';
    const firstId = await vault.createKey(name);
    const client = new CryptographyClient(
      vault.keyId(name),
      staticTokenCredential(),
      STAND_IN_CLIENT_OPTIONS,
    );
    const dataKey = randomBytes(32);
    const first = await trace(() => client.wrapKey('RSA-OAEP-256', dataKey));
    expect(first.lines).toEqual([
      `GET /keys/${name}/ 401`,
      `GET /keys/${name}/ 200 token`,
      `POST /keys/${name}//wrapkey 200 token`,
    ]);
    expect(first.requests[1]?.response).toMatchObject({
      key: { kid: firstId, kty: 'RSA', key_ops: ['encrypt', 'decrypt', 'wrapKey', 'unwrapKey'], e: 'AQAB' },
    });
    const secondId = await vault.rotate(name);
    const second = await trace(() => client.wrapKey('RSA-OAEP-256', dataKey));
    expect({
      reported: second.result.keyID,
      answered: (second.requests[0]?.response as { kid?: string } | undefined)?.kid,
    }).toEqual({
      reported: firstId,
      answered: secondId,
    });
    const unwrapped = await new CryptographyClient(
      secondId,
      staticTokenCredential(),
      STAND_IN_CLIENT_OPTIONS,
    ).unwrapKey('RSA-OAEP-256', second.result.result);
    expect(Buffer.from(unwrapped.result)).toEqual(dataKey);
  });
});
