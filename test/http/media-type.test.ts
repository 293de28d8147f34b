import { describe, expect, it } from 'vitest';
import { toData } from '../../server/calls/upstream.ts';
import { essence } from '../../server/catalog/media.ts';
import { isJsonMediaType } from '../../server/http/body.ts';

describe('media types', () => {
  it('reduces a Content-Type to its lower-cased type, without parameters or spaces', () => {
    expect(
      ['application/json', ' Application/JSON ; charset=utf-8', 'text/plain;x=1', 'TEXT/Plain', ''].map(
        essence,
      ),
    ).toEqual(['application/json', 'application/json', 'text/plain', 'text/plain', '']);
  });

  it('takes a request body as JSON only for application/json, in any case, with parameters', () => {
    const types = [
      'application/json',
      'APPLICATION/Json; charset=utf-8',
      'application/jsonx',
      'text/json',
      '',
    ];
    expect(types.map(isJsonMediaType)).toEqual([true, true, false, false, false]);
  });

  it('reads an upstream body by its media type', () => {
    const json = Buffer.from('{"a":1}');
    expect([
      toData('application/problem+json; charset=utf-8', json),
      toData('Application/JSON', json),
      toData('TEXT/plain; charset=utf-8', json),
      toData('application/octet-stream', Buffer.from([1, 2])),
      toData(null, Buffer.alloc(0)),
    ]).toEqual([
      { a: 1 },
      { a: 1 },
      '{"a":1}',
      { content_type: 'application/octet-stream', base64: 'AQI=' },
      null,
    ]);
  });
});
