import { describe, expect, it } from 'vitest';
import { LIMITS } from '../../server/config.ts';
import { excerpt, toData } from '../../server/execute/upstream.ts';

describe('excerpt', () => {
  it('keeps a short body whole', () => {
    expect(excerpt(Buffer.from('héllo'))).toBe('héllo');
  });

  it('cuts at 64 KiB and drops a character split by the cut', () => {
    const limit = LIMITS.upstreamBodyExcerptBytes;
    const body = Buffer.concat([Buffer.alloc(limit - 1, 'a'), Buffer.from('€€')]);
    const text = excerpt(body);
    expect(Buffer.byteLength(text)).toBe(limit - 1);
    expect(text).toBe('a'.repeat(limit - 1));
    expect(Buffer.byteLength(excerpt(Buffer.alloc(limit * 2, 'b')))).toBe(limit);
  });
});

describe('toData', () => {
  it('maps JSON, text, other media types and empty bodies', () => {
    expect(toData('application/json; charset=utf-8', Buffer.from('{"a":1}'))).toEqual({ a: 1 });
    expect(toData('application/problem+json', Buffer.from('[1]'))).toEqual([1]);
    expect(toData('text/csv', Buffer.from('a,b'))).toBe('a,b');
    expect(toData('image/png', Buffer.from([1, 2, 3]))).toEqual({ content_type: 'image/png', base64: 'AQID' });
    expect(toData(null, Buffer.from([0xff]))).toEqual({ content_type: 'application/octet-stream', base64: '/w==' });
    expect(toData('application/json', Buffer.alloc(0))).toBeNull();
  });
});
