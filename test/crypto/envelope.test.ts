import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createEnvelope } from '../../server/crypto/envelope.ts';
import { EnvelopeError } from '../../server/crypto/envelope-error.ts';
import { KmsUnavailableError } from '../../server/crypto/kms/kms.ts';
import { errorShape, freshLocalKms, rejectionOf, spyKms } from './kms-doubles.ts';

const CONTEXT = 'connection:client-1:user-1:github';
const AUTH_FAILED = {
  name: 'EnvelopeError',
  code: 'ENVELOPE_AUTH_FAILED',
  message: 'blob failed authentication: wrong context, or the blob was modified',
};
const WRAPPED_KEY_AUTH_FAILED = {
  name: 'EnvelopeError',
  code: 'ENVELOPE_AUTH_FAILED',
  message: 'the wrapped data key did not decrypt: the blob is corrupt or was modified',
};

/** Byte ranges of a local-KMS blob: key id "local:" + 16 hex (22 bytes), wrapped key 60 bytes. */
function localLayout(plaintextLength: number) {
  return {
    magic: [0, 3],
    version: [3, 4],
    keyIdLength: [4, 6],
    keyId: [6, 28],
    wrappedLength: [28, 30],
    wrapped: [30, 90],
    iv: [90, 102],
    tag: [102, 118],
    ciphertext: [118, 118 + plaintextLength],
  } as const;
}

describe('seal and open', () => {
  it('round-trips binary plaintext, including zero bytes', async () => {
    const envelope = createEnvelope({ kms: await freshLocalKms() });
    const plaintext = Buffer.concat([Buffer.alloc(7), randomBytes(1000), Buffer.alloc(7)]);
    const blob = await envelope.seal(plaintext, CONTEXT);
    expect(await envelope.open(blob, CONTEXT)).toEqual(plaintext);
  });

  it('round-trips strings as UTF-8', async () => {
    const envelope = createEnvelope({ kms: await freshLocalKms() });
    const text = '{"access_token":"gho_ключ🔑"}';
    const blob = await envelope.seal(text, CONTEXT);
    expect(await envelope.openString(blob, CONTEXT)).toBe(text);
    expect(await envelope.open(blob, CONTEXT)).toEqual(Buffer.from(text, 'utf8'));
  });

  it('round-trips an empty plaintext', async () => {
    const envelope = createEnvelope({ kms: await freshLocalKms() });
    const blob = await envelope.seal('', CONTEXT);
    expect(await envelope.openString(blob, CONTEXT)).toBe('');
  });

  it('opens a blob from another envelope over the same KEK (a restarted server)', async () => {
    const kms = await freshLocalKms();
    const blob = await createEnvelope({ kms }).seal('refresh-token', CONTEXT);
    expect(await createEnvelope({ kms }).openString(blob, CONTEXT)).toBe('refresh-token');
  });

  it('writes the documented layout', async () => {
    const kms = await freshLocalKms();
    const blob = await createEnvelope({ kms }).seal('secret', CONTEXT);
    const at = localLayout(6);
    expect({
      magic: blob.subarray(...at.magic).toString('latin1'),
      version: blob[3],
      keyIdLength: blob.readUInt16BE(4),
      keyId: blob.subarray(...at.keyId).toString('utf8'),
      wrappedLength: blob.readUInt16BE(28),
      length: blob.length,
    }).toEqual({
      magic: 'TGE',
      version: 1,
      keyIdLength: 22,
      keyId: kms.keyId,
      wrappedLength: 60,
      length: 124,
    });
  });
});

describe('binding and integrity', () => {
  it('refuses to open with another context', async () => {
    const envelope = createEnvelope({ kms: await freshLocalKms() });
    const blob = await envelope.seal('token', 'connection:client-1:user-1:github');
    const error = await rejectionOf(envelope.open(blob, 'connection:client-1:user-2:github'));
    expect(error).toBeInstanceOf(EnvelopeError);
    expect(errorShape(error)).toEqual(AUTH_FAILED);
  });

  it('fails on a flipped byte anywhere, with the code of the section hit', async () => {
    const kms = await freshLocalKms();
    const envelope = createEnvelope({ kms });
    const blob = await envelope.seal('secret', CONTEXT);
    const at = localLayout(6);
    const expected = (i: number): string => {
      if (i < at.keyIdLength[1]) return 'ENVELOPE_FORMAT'; // magic, version, key id length
      if (i < at.keyId[1]) return 'KMS_KEY_MISMATCH';
      if (i < at.wrappedLength[1]) return 'ENVELOPE_FORMAT';
      return 'ENVELOPE_AUTH_FAILED'; // wrapped key, iv, tag, ciphertext
    };
    const seen: string[] = [];
    for (let i = 0; i < blob.length; i++) {
      const tampered = Buffer.from(blob);
      tampered[i] = (tampered[i] as number) ^ 0xff;
      const error = await rejectionOf(envelope.open(tampered, CONTEXT));
      seen.push(error instanceof EnvelopeError ? error.code : String(error));
    }
    expect(seen).toEqual(Array.from({ length: blob.length }, (_, i) => expected(i)));
    expect(seen.length).toBe(124);
  });

  it('gives the exact error for each tampered section', async () => {
    const envelope = createEnvelope({ kms: await freshLocalKms() });
    const blob = await envelope.seal('secret', CONTEXT);
    const at = localLayout(6);
    const flip = (index: number) => {
      const copy = Buffer.from(blob);
      copy[index] = (copy[index] as number) ^ 0x01;
      return copy;
    };
    const shapes = async (index: number) =>
      errorShape(await rejectionOf(envelope.open(flip(index), CONTEXT)));
    expect(await shapes(at.magic[0])).toEqual({
      name: 'EnvelopeError',
      code: 'ENVELOPE_FORMAT',
      message: 'not a toolgate envelope',
    });
    expect(await shapes(at.version[0])).toEqual({
      name: 'EnvelopeError',
      code: 'ENVELOPE_FORMAT',
      message: 'unsupported envelope format version 0',
    });
    expect(await shapes(at.wrapped[0] + 5)).toEqual(WRAPPED_KEY_AUTH_FAILED);
    for (const section of [at.iv, at.tag, at.ciphertext]) {
      expect(await shapes(section[0])).toEqual(AUTH_FAILED);
      expect(await shapes(section[1] - 1)).toEqual(AUTH_FAILED);
    }
  });

  it('fails on a truncated or extended blob', async () => {
    const envelope = createEnvelope({ kms: await freshLocalKms() });
    const blob = await envelope.seal('secret', CONTEXT);
    expect(errorShape(await rejectionOf(envelope.open(blob.subarray(0, -1), CONTEXT)))).toEqual(AUTH_FAILED);
    expect(
      errorShape(await rejectionOf(envelope.open(Buffer.concat([blob, Buffer.of(0)]), CONTEXT))),
    ).toEqual(AUTH_FAILED);
    expect(errorShape(await rejectionOf(envelope.open(blob.subarray(0, 100), CONTEXT)))).toEqual({
      name: 'EnvelopeError',
      code: 'ENVELOPE_FORMAT',
      message: 'envelope is truncated',
    });
    expect(errorShape(await rejectionOf(envelope.open(Buffer.alloc(0), CONTEXT)))).toEqual({
      name: 'EnvelopeError',
      code: 'ENVELOPE_FORMAT',
      message: 'envelope is truncated',
    });
  });

  it('refuses a blob sealed under another KEK with KMS_KEY_MISMATCH', async () => {
    const kmsA = await freshLocalKms();
    const kmsB = await freshLocalKms();
    const blob = await createEnvelope({ kms: kmsA }).seal('token', CONTEXT);
    const error = await rejectionOf(createEnvelope({ kms: kmsB }).open(blob, CONTEXT));
    expect(errorShape(error)).toEqual({
      name: 'EnvelopeError',
      code: 'KMS_KEY_MISMATCH',
      message: `data key was wrapped by local KEK ${kmsA.keyId}, but this server's local KEK is ${kmsB.keyId}`,
    });
    expect(errorShape((error as Error).cause)).toEqual({
      name: 'KmsKeyMismatchError',
      code: 'KMS_KEY_MISMATCH',
      message: (error as Error).message,
    });
  });
});

describe('data keys', () => {
  it('draws a fresh data key, IV and wrapped key for every blob', async () => {
    const spy = spyKms(await freshLocalKms());
    const envelope = createEnvelope({ kms: spy.kms });
    const first = await envelope.seal('same plaintext', CONTEXT);
    const second = await envelope.seal('same plaintext', CONTEXT);
    const at = localLayout(14);
    expect(first.equals(second)).toBe(false);
    expect(first.subarray(...at.wrapped).equals(second.subarray(...at.wrapped))).toBe(false);
    expect(first.subarray(...at.iv).equals(second.subarray(...at.iv))).toBe(false);
    expect(first.subarray(...at.ciphertext).equals(second.subarray(...at.ciphertext))).toBe(false);
    expect(spy.calls.wrap).toBe(2);
    expect(spy.calls.dataKeys.map((key) => key.length)).toEqual([32, 32]);
    expect(spy.calls.dataKeys[0]?.equals(spy.calls.dataKeys[1] as Buffer)).toBe(false);
  });

  it('keeps the plaintext and the data key out of the blob', async () => {
    const spy = spyKms(await freshLocalKms());
    const envelope = createEnvelope({ kms: spy.kms });
    const plaintext = Buffer.from('gho_16C7e42F292c6912E7710c838347Ae178B4a', 'utf8');
    const blob = await envelope.seal(plaintext, CONTEXT);
    const dataKey = spy.calls.dataKeys[0] as Buffer;
    const asText = blob.toString('latin1');
    for (const needle of [plaintext, dataKey]) {
      expect(blob.includes(needle)).toBe(false);
      // Any 8-byte window would betray a partial leak, too.
      for (let i = 0; i + 8 <= needle.length; i++)
        expect(blob.includes(needle.subarray(i, i + 8))).toBe(false);
      for (const encoding of ['base64', 'base64url', 'hex'] as const) {
        expect(asText.includes(needle.toString(encoding))).toBe(false);
      }
    }
    expect(blob.includes(Buffer.from(CONTEXT, 'utf8'))).toBe(false);
  });
});

describe('data-key cache', () => {
  it('unwraps once per blob while the key is cached, and again after the TTL', async () => {
    const start = Date.UTC(2025, 0, 1);
    let now = start;
    const spy = spyKms(await freshLocalKms());
    const envelope = createEnvelope({ kms: spy.kms, clock: () => now, dataKeyCacheTtlMs: 60_000 });
    const blob = await envelope.seal('token', CONTEXT);
    const other = await envelope.seal('token', CONTEXT);
    expect(spy.calls.unwrap).toBe(0); // sealing does not fill the cache
    await envelope.open(blob, CONTEXT);
    await envelope.open(blob, CONTEXT);
    now = start + 59_999;
    await envelope.open(blob, CONTEXT);
    expect(spy.calls.unwrap).toBe(1);
    await envelope.open(other, CONTEXT);
    expect(spy.calls.unwrap).toBe(2);
    now = start + 60_001;
    expect(await envelope.openString(blob, CONTEXT)).toBe('token');
    expect(spy.calls.unwrap).toBe(3);
  });

  it('unwraps on every open when the cache is off', async () => {
    const spy = spyKms(await freshLocalKms());
    const envelope = createEnvelope({ kms: spy.kms, dataKeyCacheTtlMs: 0 });
    const blob = await envelope.seal('token', CONTEXT);
    await envelope.open(blob, CONTEXT);
    await envelope.open(blob, CONTEXT);
    expect(spy.calls.unwrap).toBe(2);
  });

  it('shares one unwrap between concurrent opens of the same blob', async () => {
    const spy = spyKms(await freshLocalKms());
    const envelope = createEnvelope({ kms: spy.kms });
    const blob = await envelope.seal('token', CONTEXT);
    const opened = await Promise.all(Array.from({ length: 5 }, () => envelope.openString(blob, CONTEXT)));
    expect(opened).toEqual(['token', 'token', 'token', 'token', 'token']);
    expect(spy.calls.unwrap).toBe(1);
  });

  it('does not cache a failed unwrap', async () => {
    const spy = spyKms(await freshLocalKms());
    const envelope = createEnvelope({ kms: spy.kms });
    const blob = await envelope.seal('token', CONTEXT);
    spy.overrideNextUnwrap(() =>
      Promise.reject(new KmsUnavailableError('unwrap failed: Key Vault answered 503')),
    );
    const error = await rejectionOf(envelope.open(blob, CONTEXT));
    expect(errorShape(error)).toEqual({
      name: 'EnvelopeError',
      code: 'KMS_UNAVAILABLE',
      message: 'KMS failed to unwrap the data key: unwrap failed: Key Vault answered 503',
    });
    expect(await envelope.openString(blob, CONTEXT)).toBe('token');
    expect(await envelope.openString(blob, CONTEXT)).toBe('token');
    expect(spy.calls.unwrap).toBe(2);
  });

  it('refuses and does not cache an unwrapped key of the wrong length', async () => {
    const spy = spyKms(await freshLocalKms());
    const envelope = createEnvelope({ kms: spy.kms });
    const blob = await envelope.seal('token', CONTEXT);
    spy.overrideNextUnwrap(async () => Buffer.alloc(16));
    expect(errorShape(await rejectionOf(envelope.open(blob, CONTEXT)))).toEqual({
      name: 'EnvelopeError',
      code: 'ENVELOPE_FORMAT',
      message: 'unwrapped data key has 16 bytes, not 32',
    });
    expect(await envelope.openString(blob, CONTEXT)).toBe('token');
    expect(spy.calls.unwrap).toBe(2);
  });

  it('keeps at most dataKeyCacheSize keys', async () => {
    const spy = spyKms(await freshLocalKms());
    const envelope = createEnvelope({ kms: spy.kms, dataKeyCacheSize: 2 });
    const blobs = [];
    for (let i = 0; i < 3; i++) blobs.push(await envelope.seal(`token-${i}`, CONTEXT));
    for (const blob of blobs) await envelope.open(blob, CONTEXT);
    await envelope.open(blobs[2] as Buffer, CONTEXT); // still cached
    expect(spy.calls.unwrap).toBe(3);
    await envelope.open(blobs[0] as Buffer, CONTEXT); // evicted
    expect(spy.calls.unwrap).toBe(4);
  });
});

describe('failures and misuse', () => {
  it('reports a failed wrap as KMS_UNAVAILABLE without repeating a foreign message', async () => {
    const kms = await freshLocalKms();
    const failing = { ...kms, wrapKey: () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.1:443')) };
    const error = await rejectionOf(createEnvelope({ kms: failing }).seal('token', CONTEXT));
    expect(errorShape(error)).toEqual({
      name: 'EnvelopeError',
      code: 'KMS_UNAVAILABLE',
      message: 'KMS failed to wrap the data key',
    });
    expect(errorShape((error as Error).cause)).toEqual({
      name: 'Error',
      code: undefined,
      message: 'connect ECONNREFUSED 10.0.0.1:443',
    });
  });

  it('rejects an empty or non-string context and a non-binary blob as misuse', async () => {
    const envelope = createEnvelope({ kms: await freshLocalKms() });
    const blob = await envelope.seal('token', CONTEXT);
    const misuse = async (promise: Promise<unknown>) => {
      const error = await rejectionOf(promise);
      return { type: (error as Error).constructor.name, ...errorShape(error) };
    };
    expect(await misuse(envelope.seal('token', ''))).toEqual({
      type: 'TypeError',
      name: 'TypeError',
      code: 'ERR_INVALID_ARG_VALUE',
      message: '"context" must not be empty',
    });
    expect(await misuse(envelope.open(blob, undefined as unknown as string))).toEqual({
      type: 'TypeError',
      name: 'TypeError',
      code: 'ERR_INVALID_ARG_TYPE',
      message: '"context" must be a string',
    });
    expect(await misuse(envelope.open(blob.toString('base64') as unknown as Buffer, CONTEXT))).toEqual({
      type: 'TypeError',
      name: 'TypeError',
      code: 'ERR_INVALID_ARG_TYPE',
      message: '"blob" must be a Buffer or Uint8Array',
    });
  });

  it('reports a blob that does not hold UTF-8 from openString as ENVELOPE_FORMAT', async () => {
    const envelope = createEnvelope({ kms: await freshLocalKms() });
    const blob = await envelope.seal(Buffer.of(0xc3, 0x28), CONTEXT);
    expect(errorShape(await rejectionOf(envelope.openString(blob, CONTEXT)))).toEqual({
      name: 'EnvelopeError',
      code: 'ENVELOPE_FORMAT',
      message: 'blob does not hold UTF-8 text',
    });
  });

  it('opens a Uint8Array view into a larger buffer', async () => {
    const envelope = createEnvelope({ kms: await freshLocalKms() });
    const blob = await envelope.seal('token', CONTEXT);
    const padded = new Uint8Array(blob.length + 10);
    padded.set(blob, 5);
    expect(await envelope.openString(padded.subarray(5, 5 + blob.length), CONTEXT)).toBe('token');
  });
});
