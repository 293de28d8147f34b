import { describe, expect, it } from 'vitest';
import { compileApp, compileParsed } from '../../server/catalog/catalog.ts';
import { deriveTools } from '../../server/catalog/tools.ts';
import type { OpenApiDocument } from '../../server/catalog/types.ts';
import { createUpstreamOpenApi, createUpstreamOpenApi30 } from '../support/upstream-openapi.ts';
import { compiled, doc, oneOperation, parsed, toolOf } from './helpers.ts';

const BASE = 'http://127.0.0.1:9';
const DIALECT = 'https://json-schema.org/draft/2020-12/schema';

async function upstreamTools(version: '3.0' | '3.1' = '3.1') {
  const document = version === '3.1' ? createUpstreamOpenApi(BASE) : createUpstreamOpenApi30(BASE);
  const result = await parsed(document);
  return new Map(deriveTools(result.document, result.version).map((tool) => [tool.name, tool]));
}

describe('deriveTools', () => {
  it('makes one tool per operation with an operationId, named by it, in document order', async () => {
    expect([...(await upstreamTools()).keys()]).toEqual([
      'listItems',
      'createItem',
      'getItem',
      'deleteItem',
      'listOrgRepos',
      'echo',
      'getText',
      'getImage',
      'getStatus',
      'slow',
      'redirectSameOrigin',
      'redirectCrossOrigin',
      'getWithHeaderKey',
      'getWithQueryKey',
      'getMe',
      'createNote',
    ]);
  });

  it('skips operations without an operationId', async () => {
    const result = await parsed(
      doc({
        '/a': { get: { operationId: 'a', responses: { 200: { description: 'ok' } } } },
        '/b': { get: { responses: { 200: { description: 'ok' } } } },
      }),
    );
    expect(deriveTools(result.document, result.version).map((tool) => tool.name)).toEqual(['a']);
  });

  it('derives a whole tool: path-level parameter merged in, defaults filled, schema closed', async () => {
    expect((await upstreamTools()).get('getItem')).toEqual({
      name: 'getItem',
      method: 'GET',
      pathTemplate: '/items/{itemId}',
      description: 'Get an item',
      parameters: [
        {
          name: 'itemId',
          in: 'path',
          required: true,
          schema: { type: 'string', minLength: 1 },
          style: 'simple',
          explode: false,
          allowReserved: false,
        },
        {
          name: 'fields',
          in: 'query',
          required: false,
          schema: { type: 'array', items: { type: 'string' } },
          style: 'form',
          explode: false,
          allowReserved: false,
        },
      ],
      body: null,
      scopes: [],
      accept: 'application/json',
      parametersSchema: {
        $schema: DIALECT,
        type: 'object',
        properties: {
          itemId: { type: 'string', minLength: 1 },
          fields: { type: 'array', items: { type: 'string' } },
        },
        required: ['itemId'],
        additionalProperties: false,
      },
    });
  });

  it('lets an operation parameter replace the path item’s of the same name and location', async () => {
    const tool = (await upstreamTools()).get('listOrgRepos');
    expect(
      tool?.parameters.map(({ name, in: location, schema }) => ({ name, in: location, schema })),
    ).toEqual([
      { name: 'org', in: 'path', schema: { type: 'string' } },
      { name: 'sort', in: 'query', schema: { type: 'string', enum: ['name', 'created'] } },
      { name: 'X-Trace-Id', in: 'header', schema: { type: 'string' } },
    ]);
    expect(tool?.parametersSchema.properties).toEqual({
      org: { type: 'string', description: 'Path-level' },
      sort: { type: 'string', enum: ['name', 'created'] },
      'X-Trace-Id': { type: 'string' },
    });
  });

  it('puts the JSON request body under `body`, required when the body is', async () => {
    const tool = (await upstreamTools()).get('createItem');
    expect(tool?.body).toEqual({
      required: true,
      contentType: 'application/json',
      schema: {
        type: 'object',
        required: ['title'],
        properties: {
          title: { type: 'string', minLength: 1 },
          labels: { type: 'array', items: { type: 'string' } },
        },
        additionalProperties: false,
      },
    });
    expect(tool?.parametersSchema).toEqual({
      $schema: DIALECT,
      type: 'object',
      properties: { body: tool?.body?.schema },
      required: ['body'],
      additionalProperties: false,
    });
  });

  it('takes scopes from the operation’s security, sorted and unique across alternatives', async () => {
    const tools = await upstreamTools();
    expect(tools.get('getMe')?.scopes).toEqual(['profile:read']);
    expect(tools.get('createNote')?.scopes).toEqual(['notes:write', 'profile:read']);
    expect(tools.get('getWithHeaderKey')?.scopes).toEqual([]);
    expect(tools.get('listItems')?.scopes).toEqual([]);

    const tool = await toolOf(
      oneOperation(
        '/x',
        'get',
        { security: [{ oauth: ['b', 'a'] }, { oidc: ['a', 'c'], key: [] }] },
        {
          components: {
            securitySchemes: {
              oauth: {
                type: 'oauth2',
                flows: { clientCredentials: { tokenUrl: 'https://t.invalid', scopes: {} } },
              },
              oidc: {
                type: 'openIdConnect',
                openIdConnectUrl: 'https://o.invalid/.well-known/openid-configuration',
              },
              key: { type: 'apiKey', in: 'header', name: 'X-Key' },
            },
          },
        },
      ),
    );
    expect(tool.scopes).toEqual(['a', 'b', 'c']);
  });

  it('falls back to the document’s security, and an empty operation security means none', async () => {
    const tools = await upstreamTools('3.0');
    expect(tools.get('getMe')?.scopes).toEqual(['profile:read']);
    expect(tools.get('listItems')?.scopes).toEqual([]);
  });

  it('leaves out headers the caller may not set and parameters that carry an apiKey credential', async () => {
    const tool = await toolOf(
      oneOperation(
        '/x',
        'get',
        {
          parameters: [
            { name: 'Authorization', in: 'header', required: true, schema: { type: 'string' } },
            { name: 'content-type', in: 'header', schema: { type: 'string' } },
            { name: 'Accept', in: 'header', schema: { type: 'string' } },
            { name: 'Host', in: 'header', schema: { type: 'string' } },
            { name: 'X-Api-Key', in: 'header', schema: { type: 'string' } },
            { name: 'api_key', in: 'query', schema: { type: 'string' } },
            { name: 'X-Kept', in: 'header', schema: { type: 'string' } },
          ],
        },
        {
          components: {
            securitySchemes: {
              h: { type: 'apiKey', in: 'header', name: 'x-api-key' },
              q: { type: 'apiKey', in: 'query', name: 'api_key' },
            },
          },
        },
      ),
    );
    expect(tool.parameters.map((parameter) => parameter.name)).toEqual(['X-Kept']);
    expect(Object.keys(tool.parametersSchema.properties as object)).toEqual(['X-Kept']);
  });

  it('converts OpenAPI 3.0 schemas to JSON Schema 2020-12', async () => {
    const tools = await upstreamTools('3.0');
    expect(tools.get('listItems')?.parametersSchema.properties).toEqual({
      tags: { type: 'array', items: { type: 'string' } },
      limit: { type: 'integer', exclusiveMinimum: 0, maximum: 100, examples: [10] },
    });
    expect(tools.get('createItem')?.body?.schema).toEqual({
      type: 'object',
      // `id` is read-only: OpenAPI 3.0 requires it in responses only.
      required: ['title'],
      properties: {
        id: { type: 'string', readOnly: true, description: 'Set by the server: not required in requests' },
        title: { type: 'string', minLength: 1 },
        labels: { type: ['array', 'null'], items: { type: 'string' } },
      },
      additionalProperties: false,
    });
  });

  it('converts 3.0 nullable enums and nullable compositions', async () => {
    const tool = await toolOf(
      oneOperation(
        '/x',
        'post',
        {
          requestBody: {
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: {
                    state: { type: 'string', enum: ['a', 'b'], nullable: true },
                    ref: { allOf: [{ $ref: '#/components/schemas/S' }], nullable: true },
                    max: { type: 'number', maximum: 5, exclusiveMaximum: false },
                  },
                },
              },
            },
          },
        },
        { components: { schemas: { S: { type: 'string', xml: { name: 's' } } } } },
        '3.0.3',
      ),
    );
    expect(tool.body?.schema).toEqual({
      type: 'object',
      properties: {
        state: { type: ['string', 'null'], enum: ['a', 'b', null] },
        ref: { anyOf: [{ allOf: [{ type: 'string' }] }, { type: 'null' }] },
        max: { type: 'number', maximum: 5 },
      },
    });
  });

  it('bundles circular schemas under $defs', async () => {
    const tool = await toolOf(
      oneOperation(
        '/tree',
        'post',
        {
          requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } } },
        },
        {
          components: {
            schemas: {
              Node: {
                type: 'object',
                properties: {
                  name: { type: 'string' },
                  children: { type: 'array', items: { $ref: '#/components/schemas/Node' } },
                },
              },
            },
          },
        },
      ),
    );
    const node = {
      type: 'object',
      properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/Node' } } },
    };
    expect(tool.parametersSchema).toEqual({
      $schema: DIALECT,
      type: 'object',
      properties: { body: node },
      additionalProperties: false,
      $defs: { Node: node },
    });
  });

  it('has no body parameter for an optional non-JSON body, and sends another JSON type as declared', async () => {
    const form = await toolOf(
      oneOperation('/x', 'post', {
        requestBody: { content: { 'application/x-www-form-urlencoded': { schema: { type: 'object' } } } },
      }),
    );
    expect(form.body).toBeNull();
    expect(form.parametersSchema.properties).toEqual({});

    const patch = await toolOf(
      oneOperation('/x', 'patch', {
        requestBody: {
          required: true,
          content: {
            'text/plain': { schema: { type: 'string' } },
            'application/merge-patch+json': { schema: { type: 'object' } },
          },
        },
      }),
    );
    expect(patch.body).toEqual({
      required: true,
      contentType: 'application/merge-patch+json',
      schema: { type: 'object' },
    });
  });

  it('describes a tool by summary and description, or by method and path', async () => {
    const both = await toolOf(oneOperation('/x', 'get', { summary: 'Short', description: 'Long text.' }));
    const none = await toolOf(
      oneOperation('/x/{id}', 'delete', {
        parameters: [{ name: 'id', in: 'path', required: true, schema: {} }],
      }),
    );
    expect(both.description).toBe('Short\n\nLong text.');
    expect(none.description).toBe('DELETE /x/{id}');
  });

  it('keeps a parameter described by content with its media type', async () => {
    const tool = await toolOf(
      oneOperation('/x', 'get', {
        parameters: [
          {
            name: 'where',
            in: 'query',
            required: true,
            content: {
              'application/json': { schema: { type: 'object', properties: { a: { type: 'integer' } } } },
            },
          },
        ],
      }),
    );
    expect(tool.parameters).toEqual([
      {
        name: 'where',
        in: 'query',
        required: true,
        schema: { type: 'object', properties: { a: { type: 'integer' } } },
        style: 'form',
        explode: true,
        allowReserved: false,
        contentType: 'application/json',
      },
    ]);
  });

  it('lists the media types of 2xx responses for Accept', async () => {
    const tools = await upstreamTools();
    expect(tools.get('getImage')?.accept).toBe('image/png');
    expect(tools.get('getText')?.accept).toBe('text/plain');
    expect(tools.get('deleteItem')?.accept).toBeNull();
  });

  it('compiles every tool of an app and exposes the base URL the document names', async () => {
    const app = await compiled(createUpstreamOpenApi('http://127.0.0.1:9/v1'));
    expect(app.version).toBe('3.1');
    expect(app.serverUrl).toBe('http://127.0.0.1:9/v1');
    expect(app.tools.size).toBe(16);
    expect(app.tools.get('getItem')?.validate({ itemId: 'a' })).toEqual([]);
  });

  it('answers the document’s problems from compileApp, and a schema ajv cannot compile as a problem of its operation', async () => {
    expect(
      await compileApp(
        doc({ '/a': { get: { operationId: 'a b', responses: { 200: { description: 'ok' } } } } }),
      ),
    ).toEqual({
      ok: false,
      issues: [
        {
          path: '/openapi/paths/~1a/get/operationId',
          message: 'operationId "a b" must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$: it names a tool.',
        },
      ],
    });
    // Checks refuse such a pattern first; compileParsed still never lets a broken validator through.
    const broken = doc({
      '/a': {
        get: {
          operationId: 'a',
          parameters: [{ name: 'q', in: 'query', schema: { type: 'string', pattern: '[' } }],
          responses: {},
        },
      },
    });
    expect(compileParsed({ version: '3.1', document: broken as OpenApiDocument })).toEqual({
      ok: false,
      issues: [
        {
          path: '/openapi/paths/~1a/get',
          message: expect.stringMatching(
            /^The parameter schemas of operation "a" can't be compiled: .*Invalid regular expression/,
          ),
        },
      ],
    });
  });
});
