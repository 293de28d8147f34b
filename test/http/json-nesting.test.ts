import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, nestsTooDeep, parseJson } from '../../server/http/body.ts';

/** The nesting limit (docs/reference.md "Limits"): its count of brackets and its walk agree. */

const nested = (levels: number, open = '[', close = ']') => `${open.repeat(levels)}${close.repeat(levels)}`;

describe('JSON nesting limit', () => {
  it('lets exactly the limit through and refuses one level more, in arrays and objects', () => {
    expect(nestsTooDeep(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(nestsTooDeep(nested(MAX_JSON_DEPTH + 1))).toBe(true);
    const objects = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
    expect(nestsTooDeep(objects(MAX_JSON_DEPTH))).toBe(false);
    expect(nestsTooDeep(objects(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(parseJson(nested(MAX_JSON_DEPTH + 1))).toEqual({ ok: false, error: 'too_deep' });
  });

  it('counts depth, not brackets: many shallow values pass', () => {
    const wide = JSON.stringify({ items: Array.from({ length: 500 }, (_, i) => ({ id: i, tags: [i] })) });
    expect(nestsTooDeep(wide)).toBe(false);
    expect(nestsTooDeep(`[${Array.from({ length: 300 }, () => '[]').join(',')}]`)).toBe(false);
    // Past the count, the walk decides: one level too deep among many shallow values.
    expect(nestsTooDeep(`[${'[],'.repeat(300)}${nested(MAX_JSON_DEPTH)}]`)).toBe(true);
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    expect(nestsTooDeep(JSON.stringify({ text: '['.repeat(1000) }))).toBe(false);
    expect(nestsTooDeep(JSON.stringify([`"${'{'.repeat(500)}`, '\\"[[[']))).toBe(false);
    expect(nestsTooDeep(`["\\"", ${nested(MAX_JSON_DEPTH)}]`)).toBe(true);
  });
});
