import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { stringify as toYaml } from 'yaml';
import { compileDocument } from '../../server/catalog/catalog.ts';
import { documentServerUrl } from '../../server/catalog/document.ts';
import { createUpstreamOpenApi, createUpstreamOpenApi30 } from '../support/upstream-openapi.ts';
import { compiled, compiledTool, doc, okResponse, oneOperation, refused } from './helpers.ts';

const BASE = 'http://127.0.0.1:9/v1';

describe('compileDocument: documents that register', () => {
  it('accepts the OpenAPI 3.1 and 3.0 upstream documents whole', async () => {
    const v31 = await compiled(createUpstreamOpenApi(BASE));
    const v30 = await compiled(createUpstreamOpenApi30(BASE));
    expect([v31.version, v31.tools.size, v31.skipped]).toEqual(['3.1', 16, []]);
    expect(v30.version).toBe('3.0');
    expect(v30.skipped).toEqual([]);
  });

  it('gives the same catalog from YAML text, JSON text and an object, and stores text as given', async () => {
    const document = createUpstreamOpenApi(BASE);
    const yaml = toYaml(document);
    const fromYaml = await compileDocument(yaml);
    const fromJson = await compileDocument(JSON.stringify(document));
    const fromObject = await compileDocument(document);
    if (!fromYaml.ok || !fromJson.ok || !fromObject.ok) throw new Error('refused');
    expect(fromYaml.value.catalogText).toBe(fromObject.value.catalogText);
    expect(fromJson.value.catalogText).toBe(fromObject.value.catalogText);
    expect(fromYaml.value.documentText).toBe(yaml);
    expect(fromObject.value.documentText).toBe(JSON.stringify(document));
  });

  it('never modifies the caller’s document', async () => {
    const document = createUpstreamOpenApi(BASE);
    const before = structuredClone(document);
    await compileDocument(document);
    expect(document).toEqual(before);
  });

  it('does not take "$ref" keys inside examples, defaults or property names for references', async () => {
    const app = await compiled(
      oneOperation('/x', 'post', {
        requestBody: {
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: { $ref: { type: 'string' } },
                default: { $ref: 'https://example.com/nothing' },
                examples: [{ $ref: '#/nowhere' }],
              },
            },
          },
        },
      }),
    );
    expect(app.skipped).toEqual([]);
    expect(app.tools.get('op')?.validate({ body: { $ref: 'a' } })).toEqual([]);
  });

  it('declares a path expression the document forgot as a required string, and drops a path parameter the path lacks', async () => {
    const app = await compiled(
      oneOperation('/x/{id}', 'get', {
        parameters: [{ name: 'gone', in: 'path', required: true, schema: { type: 'string' } }],
      }),
    );
    expect(app.tools.get('op')?.tool.parametersSchema).toMatchObject({
      properties: { id: { type: 'string' } },
      required: ['id'],
    });
  });
});

describe('compileDocument: $ref bombs', () => {
  const bomb = (levels: number, base: unknown, twice: (ref: unknown) => unknown) => {
    const schemas: Record<string, unknown> = { S0: base };
    for (let level = 1; level < levels; level += 1)
      schemas[`S${level}`] = twice({ $ref: `#/components/schemas/S${level - 1}` });
    return oneOperation(
      '/b',
      'post',
      {
        requestBody: {
          content: { 'application/json': { schema: { $ref: `#/components/schemas/S${levels - 1}` } } },
        },
      },
      { components: { schemas } },
    );
  };
  const properties = (ref: unknown) => ({ type: 'object', properties: { a: ref, b: ref } });
  const allOf = (ref: unknown) => ({ allOf: [ref, ref] });

  it.each([
    ['12 schemas in properties, a one-node base', bomb(12, { type: 'string' }, properties)],
    ['12 schemas in allOf', bomb(12, { type: 'string' }, allOf)],
    ['40 schemas', bomb(40, { type: 'string' }, properties)],
  ])('refuses %s at once, without expanding it', async (_label, document) => {
    const started = performance.now();
    expect(await refused(document)).toEqual([
      { path: '/openapi/paths/~1b/post', message: expect.stringMatching(/\$ref bomb/) },
    ]);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('accepts recursive schemas and a schema shared many times by one request', async () => {
    const shared = {
      Address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } },
      Node: {
        type: 'object',
        properties: {
          next: { $ref: '#/components/schemas/Node' },
          other: { $ref: '#/components/schemas/Node' },
        },
      },
    };
    const address = { $ref: '#/components/schemas/Address' };
    const app = await compiled(
      oneOperation(
        '/o',
        'post',
        {
          requestBody: {
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: {
                    billing: address,
                    shipping: address,
                    returns: address,
                    tree: { $ref: '#/components/schemas/Node' },
                  },
                },
              },
            },
          },
        },
        { components: { schemas: shared } },
      ),
    );
    expect(app.skipped).toEqual([]);
    expect(Object.keys(app.tools.get('op')?.tool.parametersSchema.$defs as object)).toEqual([
      'Address',
      'Node',
    ]);
  });
});

describe('compileDocument: tool schemas stay readable', () => {
  it('leaves definitions beyond the $defs budget open, nearest levels kept (Microsoft Graph, DocuSign)', async () => {
    const big = (name: string, next?: string) => ({
      type: 'object',
      description: `${name} `.repeat(20_000),
      properties: {
        [name.toLowerCase()]: { type: 'string' },
        ...(next ? { next: { $ref: `#/components/schemas/${next}` } } : {}),
      },
    });
    const tool = await compiledTool(
      oneOperation(
        '/x',
        'post',
        { requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/A' } } } } },
        { components: { schemas: { A: big('A', 'B'), B: big('B', 'C'), C: big('C') } } },
      ),
    );
    const schema = tool.tool.parametersSchema as {
      $defs: Record<string, { properties: Record<string, unknown> }>;
    };
    expect(Object.keys(schema.$defs)).toEqual(['A']);
    expect(schema.$defs.A?.properties.next).toEqual({
      $comment: "B: not expanded here (the tool's schema would be too large)",
    });
    expect(JSON.stringify(schema).length).toBeLessThan(64_000);
    // What was left open accepts anything; what was kept is still checked.
    expect(tool.validate({ body: { a: 'x', next: { anything: [1, 2] } } })).toEqual([]);
    expect(tool.validate({ body: { a: 1 } })).toEqual([{ path: '/body/a', message: 'Must be a string.' }]);
  });
});

describe('compileDocument: what the corpus found in real documents', () => {
  it('drops an optional parameter without a name (Notion), but skips an operation whose required one has none', async () => {
    const app = await compiled(
      doc({
        '/pages/{id}': {
          get: {
            operationId: 'retrieveAPage',
            parameters: [
              { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
              { name: 'Notion-Version', in: 'header', schema: { type: 'string' } },
              { name: '', in: 'header', schema: { type: 'string' } },
            ],
            responses: okResponse,
          },
        },
        '/b': {
          get: {
            operationId: 'b',
            parameters: [{ in: 'query', required: true, schema: {} }],
            responses: okResponse,
          },
        },
      }),
    );
    expect(Object.keys(app.tools.get('retrieveAPage')?.tool.parametersSchema.properties as object)).toEqual([
      'id',
      'Notion-Version',
    ]);
    expect(app.skipped).toEqual([
      { method: 'GET', path: '/b', operationId: 'b', reason: 'Parameter 1 has no name or no location.' },
    ]);
  });

  it('fills a path expression used twice with the one value (APIs.guru)', async () => {
    const tool = await compiledTool(
      oneOperation('/locations/{location}/items/{location}', 'get', {
        parameters: [{ name: 'location', in: 'path', required: true, schema: { type: 'string' } }],
      }),
    );
    const built = tool.buildRequest('https://api.example.test', { location: 'eu' });
    expect(built.ok && built.value.url.href).toBe('https://api.example.test/locations/eu/items/eu');
  });

  it('drops a keyword of the wrong type instead of the operation (api.video’s `pattern: 0`)', async () => {
    const tool = await compiledTool(
      oneOperation('/x', 'get', {
        parameters: [
          { name: 't', in: 'query', schema: { type: 'string', pattern: 0, maxLength: '8', minLength: 1 } },
        ],
      }),
    );
    expect(tool.tool.parametersSchema.properties).toEqual({ t: { type: 'string', minLength: 1 } });
  });

  it('reads boolean exclusive bounds in a 3.1 document as draft 4 meant them (@readme/oas-examples)', async () => {
    const tool = await compiledTool(
      oneOperation('/x', 'get', {
        parameters: [
          { name: 'n', in: 'query', schema: { type: 'integer', maximum: 10, exclusiveMaximum: true } },
          { name: 'm', in: 'query', schema: { type: 'integer', minimum: 1, exclusiveMinimum: false } },
        ],
      }),
    );
    expect(tool.tool.parametersSchema.properties).toEqual({
      n: { type: 'integer', exclusiveMaximum: 10 },
      m: { type: 'integer', minimum: 1 },
    });
    expect(tool.validate({ n: 10 })).toEqual([{ path: '/n', message: 'Must be less than 10.' }]);
  });
});

describe('compileDocument: operations left out, documents refused', () => {
  it('skips operations with external references, without fetching them', async () => {
    let fetched = 0;
    const server = createServer((_req, res) => {
      fetched += 1;
      res.end('{"type":"string"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const remote = `http://127.0.0.1:${(server.address() as AddressInfo).port}/schema.json`;
    try {
      const app = await compiled(
        doc({
          '/a': {
            get: { operationId: 'a', parameters: [{ $ref: './parameters.yaml#/Q' }], responses: okResponse },
          },
          '/b': {
            post: {
              operationId: 'b',
              requestBody: { content: { 'application/json': { schema: { $ref: remote } } } },
              responses: okResponse,
            },
          },
          '/c': { get: { operationId: 'c', responses: { 200: { $ref: 'file:///etc/passwd' } } } },
          '/d': {
            post: {
              requestBody: {
                content: { 'application/json': { schema: { $ref: '#/components/schemas/Nope' } } },
              },
              responses: okResponse,
            },
          },
        }),
      );
      expect([...app.tools.keys()]).toEqual(['c']);
      expect(app.skipped).toEqual([
        {
          method: 'GET',
          path: '/a',
          operationId: 'a',
          reason: 'Its parameter reference "./parameters.yaml#/Q" can\'t be resolved inside the document.',
        },
        {
          method: 'POST',
          path: '/b',
          operationId: 'b',
          reason: `External reference "${remote}" (only references inside the document are followed).`,
        },
        {
          method: 'POST',
          path: '/d',
          reason: 'Reference "#/components/schemas/Nope" points to nothing in the document.',
        },
      ]);
      expect(fetched).toBe(0);
    } finally {
      server.close();
    }
  });

  it('skips operations with broken paths or parameters, each with its reason', async () => {
    const app = await compiled(
      doc({
        '/ok': { get: { operationId: 'ok', responses: okResponse } },
        '/a/{x': { get: { operationId: 'braces', responses: okResponse } },
        '/b': {
          get: {
            operationId: 'proto',
            parameters: [{ name: '__proto__', in: 'query', schema: {} }],
            responses: okResponse,
          },
        },
        '/c': {
          get: {
            operationId: 'where',
            parameters: [{ name: 'f', in: 'formData', schema: {} }],
            responses: okResponse,
          },
        },
        '/d': {
          get: {
            operationId: 'header',
            parameters: [{ name: 'bad header', in: 'header', schema: {} }],
            responses: okResponse,
          },
        },
      }),
    );
    expect([...app.tools.keys()]).toEqual(['ok']);
    expect(app.skipped.map((operation) => [operation.operationId, operation.reason])).toEqual([
      ['braces', 'Its path "/a/{x" has unbalanced braces.'],
      ['proto', 'A parameter is named "__proto__".'],
      ['where', 'Parameter "f" is in "formData", not path, query, header or cookie.'],
      ['header', '"bad header" is not a valid header name.'],
    ]);
  });

  it('refuses text that is neither JSON nor YAML, and what is not an OpenAPI document', async () => {
    expect(await refused('{ "openapi": ')).toEqual([
      { path: '/openapi', message: expect.stringMatching(/^The document is neither JSON nor YAML: /) },
    ]);
    expect(await refused('- a list')).toEqual([
      { path: '/openapi', message: 'The document must be an OpenAPI document (an object).' },
    ]);
    expect(await refused({ openapi: '2.5.0', paths: {} })).toEqual([
      {
        path: '/openapi/openapi',
        message: 'openapi must be an OpenAPI version 3.0.x or 3.1.x, such as "3.1.0" (or swagger "2.0").',
      },
    ]);
    expect(await refused({ swagger: '1.2', paths: {} })).toEqual([
      {
        path: '/openapi/swagger',
        message: 'swagger must be "2.0"; other Swagger versions are not supported.',
      },
    ]);
    expect(await refused(doc({}))).toEqual([
      {
        path: '/openapi/paths',
        message: 'The document defines no operation (paths is missing or empty), so it would give no tools.',
      },
    ]);
  });

  it('refuses a document in which no operation can be served, pointing at each operation', async () => {
    expect(
      await refused(
        doc({
          '/a/{x': { get: { operationId: 'a', responses: okResponse } },
          '/b': { post: { requestBody: { required: true, content: {} }, responses: okResponse } },
        }),
      ),
    ).toEqual([
      {
        path: '/openapi/paths/~1a~1{x/get',
        message: 'No operation can be served: Its path "/a/{x" has unbalanced braces.',
      },
      {
        path: '/openapi/paths/~1b/post',
        message: 'No operation can be served: Its required request body names no media type.',
      },
    ]);
  });
});

describe('documentServerUrl', () => {
  it('fills server variables with their defaults', () => {
    expect(
      documentServerUrl({
        servers: [
          {
            url: 'https://{region}.example.com/{v}',
            variables: { region: { default: 'eu' }, v: { default: 'v2' } },
          },
        ],
      }),
    ).toBe('https://eu.example.com/v2');
  });

  it('is null for relative, non-http or missing servers', () => {
    expect(documentServerUrl({ servers: [{ url: '/v1' }] })).toBeNull();
    expect(documentServerUrl({ servers: [{ url: 'ftp://example.com' }] })).toBeNull();
    expect(documentServerUrl({})).toBeNull();
  });
});
