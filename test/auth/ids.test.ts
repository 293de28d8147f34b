import { describe, expect, it } from 'vitest';
import { keyIdOf, newApiKey } from '../../server/auth/api-keys.ts';
import { ID_PREFIX, newId } from '../../server/ids.ts';

describe('newId', () => {
  it('prefixes each kind of record and draws 20 characters of [a-z0-9]', () => {
    for (const kind of Object.keys(ID_PREFIX) as Array<keyof typeof ID_PREFIX>) {
      expect(newId(kind)).toMatch(new RegExp(`^${ID_PREFIX[kind]}_[a-z0-9]{20}$`));
    }
    expect(new Set(Array.from({ length: 1000 }, () => newId('client'))).size).toBe(1000);
  });

  it('gives API keys the key id that keyIdOf reads back', () => {
    const key = newApiKey();
    expect(key.keyId).toMatch(/^key_[a-z0-9]{20}$/);
    expect(keyIdOf(key.apiKey)).toBe(key.keyId);
  });
});
