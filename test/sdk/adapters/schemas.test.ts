/**
 * Schema conversion per provider: the portable schema (what every framework gets), strict mode
 * for OpenAI and Anthropic (or the reason a schema cannot be strict), and the strict-mode `null`s
 * removed again before a call.
 */
import { describe, expect, it } from 'vitest';
import {
  ANTHROPIC_STRICT,
  dropOptionalNulls,
  OPENAI_STRICT,
  portableSchema,
  strictSchema,
} from '../../../sdk/src/adapters/schemas.ts';

describe('SDK adapters: schemas for providers', () => {
  it('portable: drops $schema, examples, extensions and OpenAPI formats; keeps constraints and property names', () => {
    expect(
      portableSchema({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: {
          id: { type: 'integer', format: 'int64', minimum: 1, examples: [1], 'x-internal': true },
          email: { type: 'string', format: 'email', deprecated: true },
          examples: { type: 'string', readOnly: false }, // a property named like a keyword stays
          file: { type: 'string', format: 'binary', contentMediaType: 'image/png' },
        },
        required: ['id'],
        additionalProperties: false,
        $defs: { Unused: { type: 'number', format: 'double', example: 1.5 } },
      }),
    ).toEqual({
      type: 'object',
      properties: {
        id: { type: 'integer', minimum: 1 },
        email: { type: 'string', format: 'email' },
        examples: { type: 'string' },
        file: { type: 'string' },
      },
      required: ['id'],
      additionalProperties: false,
      $defs: { Unused: { type: 'number' } },
    });
  });

  it('OpenAI strict: closed objects, every property required, optional ones nullable in each form', () => {
    const converted = strictSchema(
      {
        type: 'object',
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 20, description: 'Who' },
          kind: { type: 'string', enum: ['a', 'b'] },
          either: { oneOf: [{ type: 'string' }, { type: 'integer' }] },
          maybe: { type: ['string', 'null'] },
          item: { $ref: '#/$defs/Item', description: 'The item' },
          when: { type: 'string', format: 'date-time' },
          uri: { type: 'string', format: 'uri' },
          tags: { type: 'array', items: { type: 'string' }, uniqueItems: true, maxItems: 3 },
        },
        required: ['name'],
        $defs: { Item: { type: 'object', properties: { id: { type: 'integer', default: 1 } } } },
      },
      OPENAI_STRICT,
    );
    expect(converted).toEqual({
      ok: true,
      schema: {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'Who' },
          kind: { type: ['string', 'null'], enum: ['a', 'b', null] },
          either: { anyOf: [{ type: 'string' }, { type: 'integer' }, { type: 'null' }] },
          maybe: { type: ['string', 'null'] },
          item: { description: 'The item', anyOf: [{ $ref: '#/$defs/Item' }, { type: 'null' }] },
          when: { type: ['string', 'null'], format: 'date-time' },
          uri: { type: ['string', 'null'] },
          tags: { type: ['array', 'null'], items: { type: 'string' }, maxItems: 3 },
        },
        required: ['name', 'kind', 'either', 'maybe', 'item', 'when', 'uri', 'tags'],
        additionalProperties: false,
        $defs: {
          Item: {
            type: 'object',
            properties: { id: { type: ['integer', 'null'] } },
            required: ['id'],
            additionalProperties: false,
          },
        },
      },
    });
  });

  it('strict mode refuses what it cannot express, saying where', () => {
    const cases: Array<[unknown, string]> = [
      [
        { type: 'object', properties: { m: { type: 'object' } } },
        'the object at /properties/m has no fixed properties',
      ],
      [
        { type: 'object', properties: { m: { type: 'object', additionalProperties: { type: 'string' } } } },
        'the object at /properties/m has no fixed properties',
      ],
      [{ type: 'object', properties: { a: { allOf: [{ type: 'string' }] } } }, '"allOf" at /properties/a'],
      [{ type: 'object', properties: { a: {} } }, '/properties/a accepts any value'],
      [
        { type: 'object', properties: { a: { type: 'array' } } },
        'the array at /properties/a does not say what its items are',
      ],
      [{ type: 'string' }, 'the root is not an object'],
    ];
    for (const [schema, reason] of cases)
      expect(strictSchema(schema, OPENAI_STRICT)).toEqual({ ok: false, reason });

    let deep: Record<string, unknown> = { type: 'object', properties: { leaf: { type: 'string' } } };
    for (let i = 0; i < 10; i += 1) deep = { type: 'object', properties: { n: deep } };
    expect(strictSchema(deep, OPENAI_STRICT)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^nesting deeper than 10 levels/),
    });
    expect(strictSchema(deep, ANTHROPIC_STRICT).ok).toBe(true);
  });

  it('Anthropic strict: optional stays optional, numeric and length constraints go, references are written out, recursion refused', () => {
    expect(
      strictSchema(
        {
          type: 'object',
          properties: {
            n: { type: 'integer', minimum: 1, maximum: 9 },
            body: { $ref: '#/$defs/Body' },
          },
          required: ['body'],
          $defs: {
            Body: { type: 'object', properties: { s: { type: 'string', maxLength: 3, pattern: '^a' } } },
          },
        },
        ANTHROPIC_STRICT,
      ),
    ).toEqual({
      ok: true,
      schema: {
        type: 'object',
        properties: {
          n: { type: 'integer' },
          body: {
            type: 'object',
            properties: { s: { type: 'string', pattern: '^a' } },
            additionalProperties: false,
          },
        },
        required: ['body'],
        additionalProperties: false,
      },
    });
    expect(
      strictSchema(
        {
          type: 'object',
          properties: { tree: { $ref: '#/$defs/Node' } },
          $defs: { Node: { type: 'object', properties: { child: { $ref: '#/$defs/Node' } } } },
        },
        ANTHROPIC_STRICT,
      ),
    ).toEqual({ ok: false, reason: 'a recursive schema ($defs/Node)' });
  });

  it('dropOptionalNulls removes the nulls strict mode adds, and only those', () => {
    const schema = {
      type: 'object',
      properties: {
        a: { type: 'string' },
        b: { type: ['string', 'null'] },
        c: { type: 'string' },
        body: { $ref: '#/$defs/Body' },
        list: { type: 'array', items: { type: 'object', properties: { x: { type: 'integer' } } } },
      },
      required: ['c'],
      $defs: {
        Body: {
          type: 'object',
          properties: { t: { type: 'string' }, u: { type: 'string' } },
          required: ['u'],
        },
      },
    };
    expect(
      dropOptionalNulls(schema, {
        a: null,
        b: null,
        c: null,
        body: { t: null, u: null },
        list: [{ x: null }, { x: 1 }],
        unknown: null,
      }),
    ).toEqual({ b: null, c: null, body: { u: null }, list: [{}, { x: 1 }], unknown: null });
  });
});
