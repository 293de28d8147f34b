import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { stringify as toYaml } from 'yaml';
import { documentServerUrl, parseDocument } from '../../server/catalog/document.ts';
import { createUpstreamOpenApi, createUpstreamOpenApi30 } from '../support/upstream-openapi.ts';
import { doc, okResponse, oneOperation } from './helpers.ts';

const BASE = 'http://127.0.0.1:9/v1';

describe('parseDocument: valid documents', () => {
  it('accepts the OpenAPI 3.1 upstream document and resolves every reference', async () => {
    const result = await parseDocument(createUpstreamOpenApi(BASE));
    if (!result.ok) throw new Error(JSON.stringify(result.issues));
    expect(result.version).toBe('3.1');
    expect(JSON.stringify(result.document)).not.toContain('$ref');
    const paths = result.document.paths as Record<string, Record<string, Record<string, unknown>>>;
    expect(paths['/items']?.post?.requestBody).toEqual({
      required: true,
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['title'],
            properties: {
              title: { type: 'string', minLength: 1 },
              labels: { type: 'array', items: { type: 'string' } },
            },
            additionalProperties: false,
          },
        },
      },
    });
  });

  it('accepts the OpenAPI 3.0 variant and resolves parameter references', async () => {
    const result = await parseDocument(createUpstreamOpenApi30(BASE));
    if (!result.ok) throw new Error(JSON.stringify(result.issues));
    expect(result.version).toBe('3.0');
    const paths = result.document.paths as Record<string, Record<string, Record<string, unknown>>>;
    expect(paths['/items/{itemId}']?.get?.parameters).toEqual([
      { name: 'itemId', in: 'path', required: true, schema: { type: 'string' } },
    ]);
  });

  it('accepts the document as YAML text and as JSON text', async () => {
    const document = createUpstreamOpenApi(BASE);
    const fromYaml = await parseDocument(toYaml(document));
    const fromJson = await parseDocument(JSON.stringify(document));
    const fromObject = await parseDocument(document);
    expect(fromYaml).toEqual(fromObject);
    expect(fromJson).toEqual(fromObject);
    expect(fromObject.ok).toBe(true);
  });

  it('never modifies the caller’s document', async () => {
    const document = createUpstreamOpenApi(BASE);
    const before = structuredClone(document);
    await parseDocument(document);
    expect(document).toEqual(before);
  });

  it('keeps circular schemas as references that resolve in the returned document', async () => {
    const result = await parseDocument(
      oneOperation(
        '/nodes',
        'post',
        {
          requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } } },
        },
        {
          components: {
            schemas: {
              Node: {
                type: 'object',
                properties: { children: { type: 'array', items: { $ref: '#/components/schemas/Node' } } },
              },
            },
          },
        },
      ),
    );
    if (!result.ok) throw new Error(JSON.stringify(result.issues));
    const paths = result.document.paths as Record<string, Record<string, Record<string, unknown>>>;
    expect(paths['/nodes']?.post?.requestBody).toEqual({
      content: {
        'application/json': {
          schema: {
            type: 'object',
            properties: { children: { type: 'array', items: { $ref: '#/components/schemas/Node' } } },
          },
        },
      },
    });
    // Serializable: no object cycles were made.
    expect(() => JSON.stringify(result.document)).not.toThrow();
  });

  it('applies 3.1 reference siblings: summary/description override, schema siblings are kept', async () => {
    const result = await parseDocument(
      oneOperation(
        '/things',
        'get',
        {
          parameters: [{ $ref: '#/components/parameters/Q', description: 'Overridden' }],
          responses: {
            200: {
              description: 'ok',
              content: {
                'application/json': {
                  schema: { $ref: '#/components/schemas/S', description: 'Local', minLength: 2 },
                },
              },
            },
          },
        },
        {
          components: {
            parameters: {
              Q: { name: 'q', in: 'query', description: 'Original', schema: { type: 'string' } },
            },
            schemas: { S: { type: 'string', description: 'Shared' } },
          },
        },
      ),
    );
    if (!result.ok) throw new Error(JSON.stringify(result.issues));
    const get = (result.document.paths as Record<string, Record<string, Record<string, unknown>>>)['/things']
      ?.get;
    expect(get?.parameters).toEqual([
      { name: 'q', in: 'query', description: 'Overridden', schema: { type: 'string' } },
    ]);
    expect(get?.responses).toEqual({
      200: {
        description: 'ok',
        content: {
          'application/json': {
            schema: {
              allOf: [{ type: 'string', description: 'Shared' }],
              description: 'Local',
              minLength: 2,
            },
          },
        },
      },
    });
  });
});

describe('parseDocument: refused documents', () => {
  it('reports text that is neither JSON nor YAML at the document', async () => {
    const result = await parseDocument('openapi: [3.1.0\n  info: {');
    expect(result).toEqual({
      ok: false,
      issues: [
        { path: '/openapi', message: expect.stringMatching(/^The document is neither JSON nor YAML: .+\.$/) },
      ],
    });
  });

  it.each([[['openapi', '3.1.0']], [42], [null], ['just a string']])(
    'refuses %j as a document',
    async (input) => {
      expect(await parseDocument(input)).toEqual({
        ok: false,
        issues: [{ path: '/openapi', message: 'The document must be an OpenAPI document (an object).' }],
      });
    },
  );

  it('refuses Swagger 2.0 and other versions at /openapi/openapi', async () => {
    expect(await parseDocument({ swagger: '2.0', info: {}, paths: {} })).toEqual({
      ok: false,
      issues: [
        {
          path: '/openapi/openapi',
          message: 'Swagger 2.0 documents are not supported; convert the document to OpenAPI 3.',
        },
      ],
    });
    for (const version of ['3.2.0', '3.1', '4.0.0', 3.1]) {
      expect(await parseDocument(doc({}, {}, version as string))).toEqual({
        ok: false,
        issues: [
          {
            path: '/openapi/openapi',
            message: 'openapi must be an OpenAPI version 3.0.x or 3.1.x, such as "3.1.0".',
          },
        ],
      });
    }
  });

  it('refuses external references without fetching them', async () => {
    let fetched = 0;
    const server = createServer((_req, res) => {
      fetched += 1;
      res.end('{"type":"string"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const remote = `http://127.0.0.1:${(server.address() as AddressInfo).port}/schema.json`;
    try {
      const result = await parseDocument(
        oneOperation('/things', 'post', {
          parameters: [{ $ref: './parameters.yaml#/Q' }],
          requestBody: { content: { 'application/json': { schema: { $ref: remote } } } },
          responses: { 200: { $ref: 'file:///etc/passwd' } },
        }),
      );
      expect(result).toEqual({
        ok: false,
        issues: [
          {
            path: '/openapi/paths/~1things/post/responses/200/$ref',
            message:
              'External reference "file:///etc/passwd" is not allowed; only references inside the document (#/...) are.',
          },
          {
            path: '/openapi/paths/~1things/post/parameters/0/$ref',
            message:
              'External reference "./parameters.yaml#/Q" is not allowed; only references inside the document (#/...) are.',
          },
          {
            path: '/openapi/paths/~1things/post/requestBody/content/application~1json/schema/$ref',
            message: `External reference "${remote}" is not allowed; only references inside the document (#/...) are.`,
          },
        ],
      });
      expect(fetched).toBe(0);
    } finally {
      server.close();
    }
  });

  it('refuses references to nothing, anchors, and cycles of references', async () => {
    const result = await parseDocument(
      oneOperation(
        '/things',
        'get',
        {
          parameters: [
            { $ref: '#/components/parameters/Missing' },
            { $ref: '#/components/parameters/A' },
            { $ref: '#anchor' },
          ],
        },
        {
          components: {
            parameters: {
              A: { $ref: '#/components/parameters/B' },
              B: { $ref: '#/components/parameters/A' },
            },
          },
        },
      ),
    );
    expect(result).toEqual({
      ok: false,
      issues: [
        {
          path: '/openapi/paths/~1things/get/parameters/0/$ref',
          message: 'Reference "#/components/parameters/Missing" points to nothing in the document.',
        },
        {
          path: '/openapi/paths/~1things/get/parameters/1/$ref',
          message:
            'Reference "#/components/parameters/A" starts a cycle of references that never reaches a definition.',
        },
        {
          path: '/openapi/paths/~1things/get/parameters/2/$ref',
          message: 'Reference "#anchor" is not a JSON Pointer into this document (#/...).',
        },
        {
          path: '/openapi/components/parameters/A/$ref',
          message:
            'Reference "#/components/parameters/B" starts a cycle of references that never reaches a definition.',
        },
        {
          path: '/openapi/components/parameters/B/$ref',
          message:
            'Reference "#/components/parameters/A" starts a cycle of references that never reaches a definition.',
        },
      ],
    });
  });

  it('does not take "$ref" keys inside examples, defaults or property names for references', async () => {
    const result = await parseDocument(
      oneOperation('/things', 'post', {
        requestBody: {
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: { $ref: { type: 'string' } },
                default: { $ref: 'http://evil.example/' },
              },
              example: { $ref: 'http://evil.example/' },
            },
          },
        },
      }),
    );
    expect(result.ok).toBe(true);
  });

  it('refuses duplicate operationIds, pointing at the second and naming the first', async () => {
    const result = await parseDocument(
      doc({
        '/a': { get: { operationId: 'same', responses: okResponse } },
        '/b': { post: { operationId: 'same', responses: okResponse } },
      }),
    );
    expect(result).toEqual({
      ok: false,
      issues: [
        {
          path: '/openapi/paths/~1b/post/operationId',
          message: 'operationId "same" is already used by GET /a.',
        },
      ],
    });
  });

  it('refuses operationIds that are not tool names', async () => {
    const long = `a${'b'.repeat(128)}`;
    const result = await parseDocument(
      doc({
        '/a': { get: { operationId: 'get item', responses: okResponse } },
        '/b': { get: { operationId: '-b', responses: okResponse } },
        '/c': { get: { operationId: long, responses: okResponse } },
        '/d': { get: { operationId: 'ok.name_1-2', responses: okResponse } },
      }),
    );
    const rule = '^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$';
    expect(result).toEqual({
      ok: false,
      issues: [
        {
          path: '/openapi/paths/~1a/get/operationId',
          message: `operationId "get item" must match ${rule}: it names a tool.`,
        },
        {
          path: '/openapi/paths/~1b/get/operationId',
          message: `operationId "-b" must match ${rule}: it names a tool.`,
        },
        {
          path: '/openapi/paths/~1c/get/operationId',
          message: `operationId "${long}" must match ${rule}: it names a tool.`,
        },
      ],
    });
  });

  it('refuses a document without any operationId', async () => {
    expect(await parseDocument(doc({ '/a': { get: { responses: okResponse } } }))).toEqual({
      ok: false,
      issues: [
        {
          path: '/openapi/paths',
          message: 'The document defines no operation with an operationId, so it would give no tools.',
        },
      ],
    });
  });

  it('reports parameter problems where the parameter is defined', async () => {
    const result = await parseDocument(
      doc(
        {
          '/things/{id}/{other}': {
            get: {
              operationId: 'op',
              parameters: [
                { $ref: '#/components/parameters/Id' },
                { name: 'ghost', in: 'path', required: true, schema: { type: 'string' } },
                { name: 'q', in: 'body', schema: { type: 'string' } },
                { name: 'x', in: 'query', style: 'matrix', schema: { type: 'string' } },
                { name: 'Bad Header', in: 'header', schema: { type: 'string' } },
                {
                  name: 'both',
                  in: 'query',
                  schema: { type: 'string' },
                  content: { 'application/json': {} },
                },
              ],
              responses: okResponse,
            },
          },
        },
        { components: { parameters: { Id: { name: 'id', in: 'path', schema: { type: 'string' } } } } },
      ),
    );
    expect(result).toEqual({
      ok: false,
      issues: [
        {
          path: '/openapi/components/parameters/Id/required',
          message: 'Path parameter "id" must have required: true.',
        },
        {
          path: '/openapi/paths/~1things~1{id}~1{other}/get/parameters/2/in',
          message: 'in must be one of path, query, header, cookie.',
        },
        {
          path: '/openapi/paths/~1things~1{id}~1{other}/get/parameters/3/style',
          message:
            "A query parameter's style must be one of form, spaceDelimited, pipeDelimited, deepObject.",
        },
        {
          path: '/openapi/paths/~1things~1{id}~1{other}/get/parameters/4/name',
          message: '"Bad Header" is not a valid header name.',
        },
        {
          path: '/openapi/paths/~1things~1{id}~1{other}/get/parameters/5',
          message: 'Parameter "both" must have either a schema or a content, not both or neither.',
        },
        {
          path: '/openapi/paths/~1things~1{id}~1{other}/get/parameters/1/name',
          message: 'Path parameter "ghost" does not appear in "/things/{id}/{other}".',
        },
        {
          path: '/openapi/paths/~1things~1{id}~1{other}/get',
          message: 'Path parameter "other" of "/things/{id}/{other}" is not declared.',
        },
      ],
    });
  });

  it('refuses a parameter named "__proto__", which validators confuse with the prototype', async () => {
    expect(
      await parseDocument(
        oneOperation('/x', 'get', { parameters: [{ name: '__proto__', in: 'query', schema: {} }] }),
      ),
    ).toEqual({
      ok: false,
      issues: [
        {
          path: '/openapi/paths/~1x/get/parameters/0/name',
          message: 'A parameter can\'t be named "__proto__".',
        },
      ],
    });
  });

  it('refuses a required request body the tool could not send, and allows an optional one', async () => {
    const upload = (required: boolean) =>
      oneOperation('/upload', 'post', {
        requestBody: { required, content: { 'multipart/form-data': { schema: { type: 'object' } } } },
      });
    expect(await parseDocument(upload(true))).toEqual({
      ok: false,
      issues: [
        {
          path: '/openapi/paths/~1upload/post/requestBody/content',
          message:
            'The operation requires a request body in multipart/form-data; a tool sends JSON bodies only.',
        },
      ],
    });
    expect((await parseDocument(upload(false))).ok).toBe(true);
  });

  it('refuses two parameters a tool would hold under one name', async () => {
    const result = await parseDocument(
      oneOperation('/things/{id}', 'put', {
        parameters: [
          { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'id', in: 'query', schema: { type: 'string' } },
          { name: 'body', in: 'header', schema: { type: 'string' } },
        ],
        requestBody: { content: { 'application/json': { schema: { type: 'object' } } } },
      }),
    );
    expect(result).toEqual({
      ok: false,
      issues: [
        {
          path: '/openapi/paths/~1things~1{id}/put/parameters/1/name',
          message:
            'Parameter "id" in query clashes with the path parameter of that name: a tool\'s parameters are keyed by name.',
        },
        {
          path: '/openapi/paths/~1things~1{id}/put/parameters/2/name',
          message:
            'Parameter "body" in header clashes with the request body: a tool\'s parameters are keyed by name.',
        },
      ],
    });
  });

  it('reports an invalid schema at the keyword inside it', async () => {
    const result = await parseDocument(
      oneOperation(
        '/things',
        'get',
        { parameters: [{ name: 'q', in: 'query', schema: { type: 'strin' } }] },
        {
          components: {
            schemas: { S: { type: 'object', properties: { n: { type: 'integer', minimum: 'zero' } } } },
          },
        },
      ),
    );
    expect(result).toEqual({
      ok: false,
      issues: [
        {
          path: '/openapi/paths/~1things/get/parameters/0/schema/type',
          message: expect.stringMatching(/^Not a valid schema: must be /),
        },
        {
          path: '/openapi/components/schemas/S/properties/n/minimum',
          message: 'Not a valid schema: must be a number.',
        },
      ],
    });
  });

  it('refuses security requirements naming undefined schemes', async () => {
    const result = await parseDocument(oneOperation('/things', 'get', { security: [{ nope: ['a'] }] }));
    expect(result).toEqual({
      ok: false,
      issues: [
        {
          path: '/openapi/paths/~1things/get/security/0/nope',
          message: 'Security scheme "nope" is not defined in components.securitySchemes.',
        },
      ],
    });
  });

  it('reports what only the full OpenAPI validation finds at the document, in one sentence', async () => {
    const result = await parseDocument(
      oneOperation('/things', 'get', { responses: { 200: { content: {} } } }),
    );
    expect(result).toEqual({
      ok: false,
      issues: [
        {
          path: '/openapi',
          message: expect.stringMatching(
            /^The document does not follow the OpenAPI 3\.1 specification: must have required property 'description'.*\.$/,
          ),
        },
      ],
    });
    if (!result.ok) expect(result.issues[0]?.message).not.toContain('\n');
  });

  it('prefixes pointers as asked', async () => {
    expect(
      await parseDocument(doc({ '/a': { get: { responses: okResponse } } }), { pointerPrefix: '' }),
    ).toEqual({
      ok: false,
      issues: [
        {
          path: '/paths',
          message: 'The document defines no operation with an operationId, so it would give no tools.',
        },
      ],
    });
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
