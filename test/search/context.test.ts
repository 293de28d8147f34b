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
      ]),
    ).toEqual([
      'Reversals that card holders ask their bank for. A customer questions a charge with their bank.',
      'Refund',
      '',
      '',
    ]);
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
        tools.map((tool, index) => ({ ...tool, context: contexts[index] ?? '' })),
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
