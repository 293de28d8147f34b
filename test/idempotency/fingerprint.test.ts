import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  type RequestIdentity,
  requestFingerprint,
} from '../../server/idempotency/fingerprint.ts';
import { checkIdempotencyKey } from '../../server/idempotency/key.ts';

const base: RequestIdentity = {
  toolId: 'demo:::getItem',
  appId: 'demo',
  userId: 'u1',
  parameters: { itemId: 'a', fields: ['x', 'y'], filter: { b: 1, a: { d: null, c: [1, { z: 1, y: 2 }] } } },
};

describe('canonicalJson', () => {
  it('sorts keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 1, c: 2 }, 'é', null], c: { y: true, x: 1.5 } })).toBe(
      '{"a":[{"c":2,"d":1},"é",null],"b":1,"c":{"x":1.5,"y":true}}',
    );
    expect(canonicalJson('"quoted"\n')).toBe(JSON.stringify('"quoted"\n'));
    expect(canonicalJson({ a: undefined, b: [undefined] })).toBe('{"b":[null]}');
  });
});

describe('requestFingerprint', () => {
  const fp = (change: Partial<RequestIdentity>) => requestFingerprint({ ...base, ...change });

  it('is a SHA-256 hex digest, equal for deep-equal parameters in any key order', () => {
    expect(fp({})).toMatch(/^[0-9a-f]{64}$/);
    expect(
      fp({
        parameters: {
          filter: { a: { c: [1, { y: 2, z: 1 }], d: null }, b: 1 },
          fields: ['x', 'y'],
          itemId: 'a',
        },
      }),
    ).toBe(fp({}));
  });

  it('differs when the tool, app, user or any parameter differs', () => {
    const others = [
      fp({ toolId: 'demo:::listItems' }),
      fp({ appId: 'other' }),
      fp({ userId: 'u2' }),
      fp({ userId: undefined }),
      fp({ parameters: { ...base.parameters, fields: ['y', 'x'] } }),
      fp({ parameters: { ...base.parameters, itemId: 'b' } }),
      fp({ parameters: { ...base.parameters, extra: null } }),
      fp({ parameters: { ...base.parameters, itemId: 1 } }),
    ];
    expect(new Set([fp({}), ...others]).size).toBe(others.length + 1);
  });

  it('tells an absent user from a user named "null"', () => {
    expect(fp({ userId: undefined })).not.toBe(fp({ userId: 'null' }));
  });
});

describe('checkIdempotencyKey', () => {
  it('accepts no key and 1–255 printable ASCII characters', () => {
    for (const key of [undefined, 'a', '~', ' x y ', 'k'.repeat(255)])
      expect(checkIdempotencyKey(key)).toBeNull();
  });

  it('answers invalid_request for an empty, long or non-printable key', () => {
    for (const key of ['', 'k'.repeat(256), 'a\tb', 'a\u007fb', 'caf\u00e9', 'a\u0000']) {
      expect(checkIdempotencyKey(key)).toMatchObject({ ok: false, error: 'invalid_request' });
    }
  });
});
