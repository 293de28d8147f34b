/** What a document says around an operation, read for search (server/search/context.ts). */
import { describe, expect, it } from 'vitest';
import { readQuery } from '../../server/search/analyze.ts';
import { operationContexts } from '../../server/search/context.ts';
import { rank, SharedVocabulary } from '../../server/search/rank.ts';
import { buildSegment, openSegment } from '../../server/search/segment.ts';

const document = {
  openapi: '3.1.0',
  info: { title: 'Payments', version: '1' },
  tags: [
    { name: 'disputes', description: 'Reversals that card holders ask their bank for.' },
    { name: 'plain' },
  ],
  paths: {
    '/v1/disputes': {
      get: {
        tags: ['disputes', 'plain', 7],
        responses: {
          '200': {
            content: {
              'application/json': {
                schema: { type: 'array', items: { $ref: '#/components/schemas/dispute' } },
              },
            },
          },
        },
      },
    },
    '/v1/refunds': { $ref: '#/components/pathItems/refunds' },
    '/files/{id}': {
      post: {
        responses: { default: { content: { 'application/json': { schema: { description: 'An error.' } } } } },
      },
    },
  },
  components: {
    schemas: { dispute: { type: 'object', description: 'A customer questions a charge with their bank.' } },
    pathItems: {
      refunds: { post: { responses: { '201': { description: 'x', schema: { title: 'Refund' } } } } },
    },
  },
};

describe('operationContexts', () => {
  it("reads the operation's tags' descriptions and what a success answers, through $refs", () => {
    expect(
      operationContexts(document, [
        { method: 'GET', pathTemplate: '/v1/disputes' },
        { method: 'POST', pathTemplate: '/v1/refunds' },
        { method: 'POST', pathTemplate: '/files/{id}/add', documentPath: '/files/{id}' },
        { method: 'GET', pathTemplate: '/nowhere' },
      ]).map((context) => context.text),
    ).toEqual([
      'Reversals that card holders ask their bank for. A customer questions a charge with their bank.',
      'Refund',
      '',
      '',
    ]);
  });

  it('reads the field names of what a success answers: through $ref and allOf, a list’s items, a list envelope’s', () => {
    const ok = (schema: unknown) => ({
      responses: { '200': { content: { 'application/json': { schema } } } },
    });
    const answering = {
      openapi: '3.1.0',
      info: { title: 'Chat', version: '1' },
      paths: {
        '/presence': { get: ok({ $ref: '#/components/schemas/presence' }) },
        '/users': { get: ok({ type: 'array', items: { $ref: '#/components/schemas/user' } }) },
        '/members': {
          get: ok({
            type: 'object',
            properties: {
              has_more: { type: 'boolean' },
              data: { type: 'array', items: { $ref: '#/components/schemas/user' } },
            },
          }),
        },
        '/pair': {
          get: ok({
            type: 'object',
            properties: {
              a: { type: 'array', items: {} },
              b: { type: 'array', items: { $ref: '#/components/schemas/user' } },
            },
          }),
        },
        '/wide': {
          get: ok({
            type: 'object',
            properties: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`f${i}`, {}])),
          }),
        },
      },
      components: {
        schemas: {
          presence: {
            allOf: [{ $ref: '#/components/schemas/base' }, { properties: { online: {}, presence: {} } }],
          },
          base: { type: 'object', properties: { ok: {} } },
          user: { type: 'object', properties: { id: {}, real_name: {} } },
        },
      },
    };
    const answers = operationContexts(
      answering,
      ['/presence', '/users', '/members', '/pair', '/wide'].map((path) => ({
        method: 'GET',
        pathTemplate: path,
      })),
    ).map((context) => context.answers);
    expect(answers.slice(0, 4)).toEqual([
      ['ok', 'online', 'presence'],
      ['id', 'real_name'],
      // The envelope's only array holds the things answered: their fields after its own.
      ['has_more', 'data', 'id', 'real_name'],
      // Two arrays: neither is the list.
      ['a', 'b'],
    ]);
    expect(answers[4]).toHaveLength(40);
  });

  it('lets a search find an operation by the words around it', () => {
    const vocabulary = new SharedVocabulary();
    const tools = [
      {
        name: 'GetCharges',
        method: 'GET',
        pathTemplate: '/v1/charges',
        summary: null,
        operationDescription: 'Returns a list of charges.',
        parametersSchema: {},
      },
      {
        name: 'GetDisputes',
        method: 'GET',
        pathTemplate: '/v1/disputes',
        summary: null,
        operationDescription: 'Returns a list of your disputes.',
        parametersSchema: {},
      },
    ];
    const [withContext, without] = [true, false].map((read) => {
      const contexts = read ? operationContexts(document, tools) : [];
      const text = buildSegment(
        tools.map((tool, index) => ({ ...tool, context: contexts[index]?.text ?? '' })),
        { appId: `pay${read}`, provider: 'pay.api' },
      );
      const segment = openSegment(`pay${read}`, text, vocabulary);
      if (!segment) throw new Error('segment did not open');
      vocabulary.count(segment, 1);
      return segment;
    });
    const found = (segment: typeof withContext) =>
      rank(vocabulary, [segment as NonNullable<typeof segment>], readQuery('list the reversals'), 5).map(
        (hit) => hit.name,
      );
    // Without what the document says around them, both tools are lists alike (catalog order).
    expect(found(without)).toEqual(['GetCharges', 'GetDisputes']);
    expect(found(withContext)).toEqual(['GetDisputes', 'GetCharges']);
  });
});
