import { describe, expect, it } from 'vitest';
import { compileApp } from '../../server/catalog/catalog.ts';
import {
  createUpstreamOpenApi,
  createUpstreamOpenApi30,
  UPSTREAM_TOOLS,
} from '../support/upstream-openapi.ts';
import { compiled, doc, oneOperation, toolOf, toolsOf } from './helpers.ts';

const BASE = 'http://127.0.0.1:9';
const DIALECT = 'https://json-schema.org/draft/2020-12/schema';

async function upstreamTools(version: '3.0' | '3.1' = '3.1') {
  const document = version === '3.1' ? createUpstreamOpenApi(BASE) : createUpstreamOpenApi30(BASE);
  return toolsOf(document);
}

describe('deriveTools', () => {
  it('makes one tool per operation with an operationId, named by it, in document order', async () => {
    expect([...(await upstreamTools()).keys()]).toEqual([...UPSTREAM_TOOLS]);
  });

  it('names operations without an operationId from method and path', async () => {
    const tools = await toolsOf(
      doc({
        '/a': { get: { operationId: 'a', responses: { 200: { description: 'ok' } } } },
        '/v1/items/{id}': {
          get: {
            parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
            responses: { 200: { description: 'ok' } },
          },
        },
      }),
    );
    expect([...tools.keys()]).toEqual(['a', 'get_v1_items_id']);
    expect(tools.get('get_v1_items_id')?.operationId).toBeNull();
  });

  it('gives a repeated name _2, _3, …, cut so that the name stays within 128 characters', async () => {
    const long = 'L'.repeat(128);
    const op = (operationId: string) => ({ operationId, responses: { 200: { description: 'ok' } } });
    const tools = await toolsOf(
      doc({
        '/a': { get: op('same'), post: op('same'), put: op('same') },
        '/b': { get: op(long), post: op(long) },
      }),
    );
    expect([...tools.keys()]).toEqual(['same', 'same_2', 'same_3', long, `${'L'.repeat(126)}_2`]);
  });

  it('derives a whole tool: path-level parameter merged in, defaults filled, schema closed', async () => {
    expect((await upstreamTools()).get('getItem')).toEqual({
      name: 'getItem',
      operationId: 'getItem',
      method: 'GET',
      pathTemplate: '/items/{itemId}',
      fixedQuery: null,
      summary: 'Get an item',
      operationDescription: null,
      description: 'Get an item',
      parameters: [
        {
          key: 'itemId',
          name: 'itemId',
          in: 'path',
          required: true,
          style: 'simple',
          explode: false,
          allowReserved: false,
        },
        {
          key: 'fields',
          name: 'fields',
          in: 'query',
          required: false,
          style: 'form',
          explode: false,
          allowReserved: false,
        },
      ],
      body: null,
      scopes: [],
      tags: [],
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
    expect(tool?.parameters.map(({ name, in: location }) => ({ name, in: location }))).toEqual([
      { name: 'org', in: 'path' },
      { name: 'sort', in: 'query' },
      { name: 'X-Trace-Id', in: 'header' },
    ]);
    expect(tool?.parametersSchema.properties).toEqual({
      org: { type: 'string', description: 'Path-level' },
      sort: { type: 'string', enum: ['name', 'created'] },
      'X-Trace-Id': { type: 'string' },
    });
  });

  it('puts the JSON request body under `body`, required when the body is', async () => {
    const tool = (await upstreamTools()).get('createItem');
    expect(tool?.body).toEqual({ required: true, kind: 'json', contentType: 'application/json' });
    expect(tool?.parametersSchema).toEqual({
      $schema: DIALECT,
      type: 'object',
      properties: { body: { $ref: '#/$defs/NewItem' } },
      $defs: {
        NewItem: {
          type: 'object',
          required: ['title'],
          properties: {
            title: { type: 'string', minLength: 1 },
            labels: { type: 'array', items: { type: 'string' } },
          },
          additionalProperties: false,
        },
      },
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

  it('leaves out headers the caller may not set and the parameters of the operation’s apiKey schemes', async () => {
    const tool = await toolOf(
      oneOperation(
        '/x',
        'get',
        {
          security: [{ h: [] }, { q: [] }],
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

  it('keeps a scheme’s parameter when the operation does not use the scheme, and leaves out the app’s api-key parameter', async () => {
    const document = oneOperation(
      '/x',
      'get',
      {
        parameters: [
          { name: 'X-Api-Key', in: 'header', schema: { type: 'string' } },
          { name: 'api_key', in: 'query', schema: { type: 'string' } },
        ],
      },
      { components: { securitySchemes: { h: { type: 'apiKey', in: 'header', name: 'x-api-key' } } } },
    );
    expect((await toolOf(document)).parameters.map((parameter) => parameter.name)).toEqual([
      'X-Api-Key',
      'api_key',
    ]);
    const app = await compiled(document, { service: { in: 'query', name: 'api_key' } });
    expect(app.tools.get('op')?.tool.parameters.map((parameter) => parameter.name)).toEqual(['X-Api-Key']);
  });

  it('converts OpenAPI 3.0 schemas to JSON Schema 2020-12', async () => {
    const tools = await upstreamTools('3.0');
    expect(tools.get('listItems')?.parametersSchema.properties).toEqual({
      tags: { type: 'array', items: { type: 'string' } },
      limit: { type: 'integer', exclusiveMinimum: 0, maximum: 100, examples: [10] },
    });
    expect(tools.get('createItem')?.parametersSchema.$defs).toHaveProperty('NewItem', {
      type: 'object',
      // `id` is read-only: it is answered, never sent, so the request body has no such property.
      required: ['title'],
      properties: {
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
    expect(tool.parametersSchema).toMatchObject({
      properties: {
        body: {
          type: 'object',
          properties: {
            state: { type: ['string', 'null'], enum: ['a', 'b', null] },
            ref: { anyOf: [{ allOf: [{ $ref: '#/$defs/S' }] }, { type: 'null' }] },
            max: { type: 'number', maximum: 5 },
          },
        },
      },
      $defs: { S: { type: 'string' } },
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
      properties: { body: { $ref: '#/$defs/Node' } },
      additionalProperties: false,
      $defs: { Node: node },
    });
  });

  it('picks JSON over the other media types, and sends another JSON type as declared', async () => {
    const form = await toolOf(
      oneOperation('/x', 'post', {
        requestBody: { content: { 'application/x-www-form-urlencoded': { schema: { type: 'object' } } } },
      }),
    );
    expect(form.body).toEqual({
      required: false,
      kind: 'form',
      contentType: 'application/x-www-form-urlencoded',
    });
    expect(form.parametersSchema.properties).toEqual({ body: { type: 'object' } });

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
    expect(patch.body).toEqual({ required: true, kind: 'json', contentType: 'application/merge-patch+json' });
    expect(patch.parametersSchema.properties).toEqual({ body: { type: 'object' } });
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
    expect(tool.parametersSchema.properties).toEqual({
      where: { type: 'object', properties: { a: { type: 'integer' } } },
    });
    expect(tool.parameters).toEqual([
      {
        key: 'where',
        name: 'where',
        in: 'query',
        required: true,
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

  it('turns operationIds into tool names, and skips an operation whose schema is not valid', async () => {
    const app = await compiled(
      doc({
        '/a': { get: { operationId: 'a b', responses: { 200: { description: 'ok' } } } },
        '/b': {
          get: {
            operationId: 'b',
            parameters: [{ name: 'q', in: 'query', schema: { type: 'string', minLength: -1 } }],
            responses: {},
          },
        },
      }),
    );
    expect([...app.tools.keys()]).toEqual(['a_b']);
    expect(app.skipped).toEqual([
      {
        method: 'GET',
        path: '/b',
        operationId: 'b',
        reason:
          'Its parameter schema is not a valid JSON Schema (at /properties/q/minLength: Must be at least 0).',
      },
    ]);
    const nothingServable = doc({
      '/b': {
        get: {
          operationId: 'b',
          parameters: [{ name: 'q', in: 'query', schema: { type: 'string', minLength: -1 } }],
          responses: {},
        },
      },
    });
    expect(await compileApp(nothingServable)).toEqual({
      ok: false,
      error: [
        {
          path: '/openapi/paths/~1b/get',
          message:
            'No operation can be served: Its parameter schema is not a valid JSON Schema (at /properties/q/minLength: Must be at least 0).',
        },
      ],
    });
  });
});
