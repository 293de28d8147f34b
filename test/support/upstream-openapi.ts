/**
 * The OpenAPI documents of the test upstream (`upstream.ts`): a full OpenAPI 3.1 document and a small
 * OpenAPI 3.0 variant of some of its operations. Both are plain JSON, ready to be the `openapi` of
 * an app registration; `servers[0].url` is the running upstream's base URL.
 *
 * Security schemes (names used in registrations and tests):
 * - `oauth` — OAuth2 authorization code; `getMe` needs `profile:read`, `createNote` needs `notes:write`.
 * - `apiKeyHeader` — `X-Api-Key` header (`getWithHeaderKey`); `apiKeyQuery` — `api_key` query (`getWithQueryKey`).
 */

type Json = Record<string, unknown>;

const jsonContent = (schema: Json) => ({ 'application/json': { schema } });
const ok = (description: string, content?: Json) => ({ description, ...(content ? { content } : {}) });
const echoResponse = {
  200: ok('What the upstream received', jsonContent({ $ref: '#/components/schemas/Echo' })),
};

/** The tools the 3.1 document makes: one per operation, named by its operationId, in document order. */
export const UPSTREAM_TOOLS = [
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
] as const;

/** The tools of the small 3.0 variant, in document order. */
export const UPSTREAM_30_TOOLS = ['listItems', 'createItem', 'getItem', 'getMe'] as const;

/** OpenAPI 3.1 document of every upstream operation. */
export function createUpstreamOpenApi(baseUrl: string): Json {
  return {
    openapi: '3.1.0',
    info: { title: 'toolgate test upstream', version: '1.0.0' },
    servers: [{ url: baseUrl }],
    paths: {
      '/items': {
        get: {
          operationId: 'listItems',
          summary: 'List items',
          description: 'Filters items; echoes the query it received.',
          parameters: [
            { name: 'tags', in: 'query', schema: { type: 'array', items: { type: 'string' } } },
            {
              name: 'ids',
              in: 'query',
              style: 'form',
              explode: false,
              schema: { type: 'array', items: { type: 'integer' } },
            },
            {
              name: 'sizes',
              in: 'query',
              style: 'spaceDelimited',
              schema: { type: 'array', items: { type: 'string' } },
            },
            {
              name: 'colors',
              in: 'query',
              style: 'pipeDelimited',
              schema: { type: 'array', items: { type: 'string' } },
            },
            {
              name: 'filter',
              in: 'query',
              style: 'deepObject',
              explode: true,
              schema: { type: 'object', additionalProperties: { type: 'string' } },
            },
            {
              name: 'point',
              in: 'query',
              schema: { type: 'object', properties: { x: { type: 'integer' }, y: { type: 'integer' } } },
            },
            {
              name: 'limit',
              in: 'query',
              description: 'Page size',
              schema: { type: 'integer', minimum: 1, maximum: 100 },
            },
            { name: 'q', in: 'query', allowReserved: true, schema: { type: 'string' } },
          ],
          responses: echoResponse,
        },
        post: {
          operationId: 'createItem',
          summary: 'Create an item',
          requestBody: {
            required: true,
            content: jsonContent({ $ref: '#/components/schemas/NewItem' }),
          },
          responses: { 201: ok('Created', jsonContent({ $ref: '#/components/schemas/Item' })) },
        },
      },
      '/items/{itemId}': {
        parameters: [
          { name: 'itemId', in: 'path', required: true, schema: { type: 'string', minLength: 1 } },
        ],
        get: {
          operationId: 'getItem',
          summary: 'Get an item',
          parameters: [
            {
              name: 'fields',
              in: 'query',
              explode: false,
              schema: { type: 'array', items: { type: 'string' } },
            },
          ],
          responses: { 200: ok('The item', jsonContent({ $ref: '#/components/schemas/Item' })) },
        },
        delete: { operationId: 'deleteItem', summary: 'Delete an item', responses: { 204: ok('Deleted') } },
      },
      '/orgs/{org}/repos': {
        parameters: [
          { name: 'org', in: 'path', required: true, description: 'Path-level', schema: { type: 'string' } },
          { name: 'sort', in: 'query', schema: { type: 'string' } },
        ],
        get: {
          operationId: 'listOrgRepos',
          parameters: [
            { name: 'sort', in: 'query', schema: { type: 'string', enum: ['name', 'created'] } },
            { name: 'X-Trace-Id', in: 'header', schema: { type: 'string' } },
          ],
          responses: echoResponse,
        },
      },
      '/echo': {
        get: {
          operationId: 'echo',
          summary: 'Echo the request',
          parameters: [
            { name: 'X-Trace-Id', in: 'header', schema: { type: 'string' } },
            { name: 'X-Tags', in: 'header', schema: { type: 'array', items: { type: 'string' } } },
            { name: 'theme', in: 'cookie', schema: { type: 'string' } },
            { name: 'q', in: 'query', schema: { type: 'string' } },
          ],
          responses: echoResponse,
        },
      },
      '/text': {
        get: {
          operationId: 'getText',
          responses: { 200: ok('Plain text', { 'text/plain': { schema: { type: 'string' } } }) },
        },
      },
      '/image': {
        get: {
          operationId: 'getImage',
          responses: {
            200: ok('A 1×1 PNG', {
              'image/png': { schema: { type: 'string', contentMediaType: 'image/png' } },
            }),
          },
        },
      },
      '/status/{code}': {
        get: {
          operationId: 'getStatus',
          summary: 'Answer with the given status',
          description: 'JSON `{ "error": "status <code>" }`, or `size` bytes of text/plain.',
          parameters: [
            {
              name: 'code',
              in: 'path',
              required: true,
              schema: { type: 'integer', minimum: 100, maximum: 599 },
            },
            { name: 'size', in: 'query', schema: { type: 'integer', minimum: 0 } },
          ],
          responses: { 200: ok('The status asked for'), default: ok('The status asked for') },
        },
      },
      '/slow': {
        get: {
          operationId: 'slow',
          summary: 'Answer after `ms` milliseconds',
          parameters: [{ name: 'ms', in: 'query', required: true, schema: { type: 'integer', minimum: 0 } }],
          responses: { 200: ok('Slept', jsonContent({ type: 'object' })) },
        },
      },
      '/redirect/same': {
        get: {
          operationId: 'redirectSameOrigin',
          summary: 'Redirect to /echo on this origin',
          responses: { 302: ok('Found') },
        },
      },
      '/redirect/cross': {
        get: {
          operationId: 'redirectCrossOrigin',
          summary: 'Redirect to another origin',
          responses: { 302: ok('Found') },
        },
      },
      '/secure/header-key': {
        get: {
          operationId: 'getWithHeaderKey',
          security: [{ apiKeyHeader: [] }],
          responses: echoResponse,
        },
      },
      '/secure/query-key': {
        get: {
          operationId: 'getWithQueryKey',
          security: [{ apiKeyQuery: [] }],
          responses: echoResponse,
        },
      },
      '/me': {
        get: {
          operationId: 'getMe',
          summary: 'The signed-in user',
          security: [{ oauth: ['profile:read'] }],
          responses: { 200: ok('The user', jsonContent({ $ref: '#/components/schemas/User' })) },
        },
      },
      '/me/notes': {
        post: {
          operationId: 'createNote',
          security: [{ oauth: ['notes:write', 'profile:read'] }],
          requestBody: {
            required: true,
            content: jsonContent({
              type: 'object',
              required: ['text'],
              properties: { text: { type: 'string' } },
              additionalProperties: false,
            }),
          },
          responses: { 201: ok('Created', jsonContent({ type: 'object' })) },
        },
      },
    },
    components: {
      schemas: {
        NewItem: {
          type: 'object',
          required: ['title'],
          properties: {
            title: { type: 'string', minLength: 1 },
            labels: { type: 'array', items: { type: 'string' } },
          },
          additionalProperties: false,
        },
        Item: {
          type: 'object',
          properties: {
            id: { type: 'string' },
            title: { type: 'string' },
            labels: { type: 'array', items: { type: 'string' } },
          },
        },
        User: { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' } } },
        Echo: {
          type: 'object',
          properties: {
            method: { type: 'string' },
            url: { type: 'string' },
            headers: { type: 'object' },
            body: { type: 'string' },
          },
        },
      },
      securitySchemes: {
        oauth: {
          type: 'oauth2',
          flows: {
            authorizationCode: {
              authorizationUrl: 'https://auth.invalid/authorize',
              tokenUrl: 'https://auth.invalid/token',
              scopes: { 'profile:read': 'Read the profile', 'notes:write': 'Write notes' },
            },
          },
        },
        apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
        apiKeyQuery: { type: 'apiKey', in: 'query', name: 'api_key' },
      },
    },
  };
}

/** OpenAPI 3.0 variant: a few operations, written with 3.0's schema dialect (nullable, boolean exclusives). */
export function createUpstreamOpenApi30(baseUrl: string): Json {
  return {
    openapi: '3.0.3',
    info: { title: 'toolgate test upstream (3.0)', version: '1.0.0' },
    servers: [{ url: baseUrl }],
    security: [{ oauth: ['profile:read'] }],
    paths: {
      '/items': {
        get: {
          operationId: 'listItems',
          security: [],
          parameters: [
            { name: 'tags', in: 'query', schema: { type: 'array', items: { type: 'string' } } },
            {
              name: 'limit',
              in: 'query',
              schema: { type: 'integer', minimum: 0, exclusiveMinimum: true, maximum: 100, example: 10 },
            },
          ],
          responses: echoResponse,
        },
        post: {
          operationId: 'createItem',
          security: [],
          requestBody: { required: true, content: jsonContent({ $ref: '#/components/schemas/NewItem' }) },
          responses: { 201: ok('Created', jsonContent({ type: 'object' })) },
        },
      },
      '/items/{itemId}': {
        get: {
          operationId: 'getItem',
          security: [],
          parameters: [{ $ref: '#/components/parameters/ItemId' }],
          responses: { 200: ok('The item', jsonContent({ type: 'object' })) },
        },
      },
      '/me': {
        get: {
          operationId: 'getMe',
          responses: { 200: ok('The user', jsonContent({ type: 'object' })) },
        },
      },
    },
    components: {
      parameters: {
        ItemId: { name: 'itemId', in: 'path', required: true, schema: { type: 'string' } },
      },
      schemas: {
        NewItem: {
          type: 'object',
          required: ['id', 'title'],
          properties: {
            id: {
              type: 'string',
              readOnly: true,
              description: 'Set by the server: not required in requests',
            },
            title: { type: 'string', minLength: 1 },
            labels: { type: 'array', nullable: true, items: { type: 'string' } },
          },
          additionalProperties: false,
        },
        Echo: { type: 'object' },
      },
      securitySchemes: {
        oauth: {
          type: 'oauth2',
          flows: {
            authorizationCode: {
              authorizationUrl: 'https://auth.invalid/authorize',
              tokenUrl: 'https://auth.invalid/token',
              scopes: { 'profile:read': 'Read the profile' },
            },
          },
        },
      },
    },
  };
}
