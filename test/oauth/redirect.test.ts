import { describe, expect, it } from 'vitest';
import { redirectWith } from '../../server/oauth/redirect.ts';

describe('redirectWith', () => {
  it.each([
    ['https://a.example/cb', 'https://a.example/cb?status=success'],
    ['https://a.example/cb?', 'https://a.example/cb?status=success'],
    ['https://a.example/cb?x=1', 'https://a.example/cb?x=1&status=success'],
    // The client's own query is kept byte for byte, whatever its encoding.
    ['https://a.example/cb?t=a%20b&u=c+d&v', 'https://a.example/cb?t=a%20b&u=c+d&v&status=success'],
    // A status the registered URI carried gives way to ours: the client reads one answer.
    ['https://a.example/cb?status=x&y=2', 'https://a.example/cb?y=2&status=success'],
  ])('%s → %s', (uri, expected) => {
    expect(redirectWith(uri, { status: 'success' })).toBe(expected);
  });

  it('adds status and reason, encoded', () => {
    expect(
      redirectWith('https://a.example/cb?x=1&reason=old', { status: 'error', reason: 'access_denied' }),
    ).toBe('https://a.example/cb?x=1&status=error&reason=access_denied');
    expect(redirectWith('https://a.example/cb', { status: 'error', reason: 'a b&c' })).toBe(
      'https://a.example/cb?status=error&reason=a%20b%26c',
    );
  });
});
