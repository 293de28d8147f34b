import type { AnyRouter } from '@trpc/server';
import type { OpenAPIObject } from 'trpc-to-openapi';
import { apiError, ERROR_STATUS, type ErrorBody, type ErrorCode } from '../../shared/errors.ts';
import { MCP_PATH } from '../mcp/path.ts';
import { CALLBACK_PATH, COMPLETE_PATH } from '../oauth/state.ts';

type SchemaObject = NonNullable<NonNullable<OpenAPIObject['components']>['schemas']>[string];
type Operation = {
  tags?: string[];
  description?: string;
  responses?: Record<string, unknown>;
  requestBody?: { content?: Record<string, Record<string, unknown>> };
};

/** What each error code means to a caller, with the body it answers: the contract's table (§1). */
const ERRORS: Record<ErrorCode, { when: string; example: ErrorBody }> = {
  invalid_request: {
    when: 'malformed JSON, a body, query or header of the wrong shape, a missing field, or X-Service-User-Id missing where the tool needs a user',
    example: apiError('invalid_request', 'The request does not have the expected shape.', {
      issues: [{ path: '/toolId', message: 'Required' }],
    }),
  },
  invalid_parameters: {
    when: "`parameters` fail the tool's schema (from its OpenAPI operation); `issues[].path` points into `parameters`",
    example: apiError('invalid_parameters', 'The parameters do not match the tool.', {
      tool_id: 'petstore:::getPetById',
      issues: [{ path: '/petId', message: 'must be integer' }],
    }),
  },
  redirect_uri_mismatch: {
    when: '`clientRedirectUri` is not registered on the client (exact string match)',
    example: apiError('redirect_uri_mismatch', 'clientRedirectUri is not registered on this client.'),
  },
  state_invalid: {
    when: 'the OAuth state is missing or unknown',
    example: apiError('state_invalid', 'The state is missing or unknown.'),
  },
  invalid_api_key: {
    when: 'the Authorization header is missing or malformed, or names an unknown or revoked key',
    example: apiError('invalid_api_key', 'The API key is missing, malformed, unknown or revoked.'),
  },
  invalid_client: {
    when: 'X-Service-Client-Id is missing or unknown, or the key was not issued to that client',
    example: apiError(
      'invalid_client',
      'X-Service-Client-Id is missing, unknown, or not the client this key was issued to.',
    ),
  },
  auth_required: {
    when: 'the tool acts for an end user who has not authorized the app (start the flow at /initiateOAuth and retry); with `reauth_required: true` the stored grant is dead (revoked, expired) and the flow must run again',
    example: apiError('auth_required', 'The user has not authorized this app.', {
      auth_endpoint: '/initiateOAuth',
      app_id: 'github',
    }),
  },
  rbac_denied: {
    when: "the key lacks a scope (`scope` names the narrowest one that would allow the call), or the user's grant lacks a provider scope the tool declares",
    example: apiError('rbac_denied', 'The API key lacks the scope tools:execute:petstore.', {
      reason: 'scope_missing',
      scope: 'tools:execute:petstore',
    }),
  },
  tool_not_found: {
    when: 'the app or the tool is unknown (also a non-composite toolId without X-Service-App-Id)',
    example: apiError('tool_not_found', 'No tool petstore:::getPet.', { tool_id: 'petstore:::getPet' }),
  },
  app_not_found: {
    when: 'no app has this id',
    example: apiError('app_not_found', 'No app petstore is registered.', { app_id: 'petstore' }),
  },
  not_found: {
    when: 'an unknown path or record (client, key, connection)',
    example: apiError('not_found', 'No client has this id.'),
  },
  method_not_allowed: {
    when: 'another method than the ones documented on this path (the `Allow` header lists them)',
    example: apiError('method_not_allowed', 'PATCH is not allowed on this path.'),
  },
  idempotency_in_progress: {
    when: 'a request with the same X-Service-Idempotency-Key is still running',
    example: apiError('idempotency_in_progress', 'A request with this idempotency key is still running.'),
  },
  payload_too_large: {
    when: 'the body is larger than MAX_BODY_BYTES (MAX_DOCUMENT_BYTES for an app registration)',
    example: apiError('payload_too_large', 'The body is larger than 1048576 bytes.', { limit: 1048576 }),
  },
  unsupported_media_type: {
    when: 'the body is not `application/json`',
    example: apiError('unsupported_media_type', 'The body must be application/json.'),
  },
  idempotency_key_reused: {
    when: 'the X-Service-Idempotency-Key was used within 24 h with a different request',
    example: apiError('idempotency_key_reused', 'This idempotency key was used with another request.'),
  },
  rate_limited: {
    when: 'the API key made RATE_LIMIT_PER_KEY_PER_MIN calls in the last 60 s; `Retry-After` and `retry_after` give the seconds to wait',
    example: apiError('rate_limited', 'Too many calls with this API key; retry later.', { retry_after: 7 }),
  },
  internal_error: {
    when: 'a bug in the service; the body never holds a stack, SQL or a secret (the log has the request id)',
    example: apiError('internal_error', 'The server failed to handle this request.'),
  },
  upstream_error: {
    when: 'the upstream answered a non-2xx status: `upstream_status` and the first 64 KiB of its body',
    example: apiError('upstream_error', 'The upstream answered 404.', {
      upstream_status: 404,
      upstream_body: '{"message":"Pet not found"}',
    }),
  },
  upstream_unreachable: {
    when: 'the upstream could not be reached: connection refused, DNS or TLS failure',
    example: apiError('upstream_unreachable', 'The upstream could not be reached.'),
  },
  upstream_too_large: {
    when: 'a successful upstream body is larger than MAX_UPSTREAM_BODY_BYTES',
    example: apiError('upstream_too_large', 'The upstream answer is larger than 10485760 bytes.', {
      limit: 10485760,
    }),
  },
  upstream_timeout: {
    when: 'the upstream did not answer within UPSTREAM_TIMEOUT_MS',
    example: apiError('upstream_timeout', 'The upstream did not answer in time.'),
  },
};

/** Every route: bad input, a wrong method on the path, our own failure. */
const EVERY: ErrorCode[] = ['invalid_request', 'method_not_allowed', 'internal_error'];
const BODY: ErrorCode[] = ['payload_too_large', 'unsupported_media_type'];
const AGENT: ErrorCode[] = ['invalid_api_key', 'invalid_client'];
const ADMIN: ErrorCode[] = ['invalid_api_key', 'rbac_denied'];

/** The errors each operation can answer, beyond those its method and kind imply. */
const OPERATION_ERRORS: Record<string, ErrorCode[]> = {
  'POST /proxyV2': [
    ...AGENT,
    'invalid_parameters',
    'auth_required',
    'rbac_denied',
    'tool_not_found',
    'idempotency_in_progress',
    'idempotency_key_reused',
    'rate_limited',
    'upstream_error',
    'upstream_unreachable',
    'upstream_too_large',
    'upstream_timeout',
  ],
  'GET /tools': AGENT,
  'POST /initiateOAuth': [...AGENT, 'rbac_denied', 'redirect_uri_mismatch', 'app_not_found'],
  'GET /connections': [...AGENT, 'rbac_denied'],
  'DELETE /connections/{appId}': [...AGENT, 'rbac_denied', 'not_found'],
  'POST /admin/clients': ADMIN,
  'GET /admin/clients': ADMIN,
  'POST /admin/clients/{clientId}/redirect-uris': [...ADMIN, 'not_found'],
  'GET /admin/clients/{clientId}/redirect-uris': [...ADMIN, 'not_found'],
  'DELETE /admin/clients/{clientId}/redirect-uris': [...ADMIN, 'not_found'],
  'POST /admin/clients/{clientId}/api-keys': [...ADMIN, 'not_found'],
  'GET /admin/clients/{clientId}/api-keys': [...ADMIN, 'not_found'],
  'DELETE /admin/api-keys/{keyId}': [...ADMIN, 'not_found'],
  'PUT /admin/apps/{appId}': ADMIN,
  'GET /admin/apps': ADMIN,
  'GET /admin/apps/{appId}': [...ADMIN, 'app_not_found'],
  'DELETE /admin/apps/{appId}': [...ADMIN, 'app_not_found'],
};

/** The codes an operation can answer: its own, the body errors of a body, and the ones of every route. */
export function operationErrors(method: string, path: string): ErrorCode[] {
  const own = OPERATION_ERRORS[`${method} ${path}`] ?? [];
  const body = method === 'POST' || method === 'PUT' ? BODY : [];
  const codes = new Set<ErrorCode>([...EVERY, ...body, ...own]);
  return (Object.keys(ERROR_STATUS) as ErrorCode[]).filter((code) => codes.has(code));
}

const errorContent = (codes: ErrorCode[]) => ({
  'application/json': {
    schema: { $ref: '#/components/schemas/Error' },
    examples: Object.fromEntries(
      codes.map((code) => [code, { summary: code, value: (ERRORS[code] as { example: ErrorBody }).example }]),
    ),
  },
});

/** One response per status: each code with when it happens, and its body as an example. */
function errorResponses(codes: ErrorCode[]): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes)
    byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  const responses: Record<string, unknown> = {};
  for (const [status, group] of byStatus) {
    responses[String(status)] = {
      description: group.map((code) => `\`${code}\`: ${ERRORS[code].when}.`).join('\n\n'),
      headers: {
        'X-Request-Id': REQUEST_ID_HEADER,
        ...(group.includes('rate_limited') ? { 'Retry-After': RETRY_AFTER_HEADER } : {}),
        ...(group.includes('method_not_allowed') ? { Allow: ALLOW_HEADER } : {}),
      },
      content: errorContent(group),
    };
  }
  return responses;
}

const REQUEST_ID_HEADER = {
  description: 'The id of this request (yours when you sent a valid X-Request-Id), also in the server log.',
  schema: { type: 'string' },
};
const RETRY_AFTER_HEADER = { description: 'Seconds to wait, at least 1.', schema: { type: 'integer' } };
const ALLOW_HEADER = { description: 'The methods this path answers.', schema: { type: 'string' } };

const ERROR_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['ok', 'error', 'message'],
  properties: {
    ok: { type: 'boolean', const: false },
    error: { type: 'string', enum: Object.keys(ERROR_STATUS) },
    message: { type: 'string', description: 'One human sentence.' },
    issues: {
      type: 'array',
      description: 'invalid_request and invalid_parameters: what is wrong, where.',
      items: {
        type: 'object',
        required: ['path', 'message'],
        properties: {
          path: { type: 'string', description: 'JSON Pointer ("" for the whole body)' },
          message: { type: 'string' },
        },
      },
    },
  },
  additionalProperties: true,
  description:
    'Every error: `{ ok: false, error, message, ...extra }`. The extra fields depend on `error` ' +
    '(`tool_id`, `app_id`, `auth_endpoint`, `reauth_required`, `reason`, `scope`, `limit`, ' +
    '`retry_after`, `upstream_status`, `upstream_body`): see the examples of each status.',
};

const TAGS = [
  {
    name: 'agent',
    description: 'What an agent calls with its API key and X-Service-Client-Id: the catalog and tool calls.',
  },
  {
    name: 'oauth',
    description: "End users' authorizations: start a flow, the provider's callback, the stored connections.",
  },
  {
    name: 'admin',
    description:
      'Clients, their redirect URIs and API keys, and apps. Needs a key with scope `admin`; no client id.',
  },
  { name: 'operations', description: 'Health, readiness, metrics, this document, the MCP endpoint.' },
];

const DESCRIPTION = `Run any upstream API operation as a tool for AI agents, on behalf of their end users, without the agent holding their secrets.

**Authentication.** Every agent and admin call sends \`Authorization: Bearer <API key>\`. Agent calls also send \`X-Service-Client-Id\` (the client the key was issued to), and \`X-Service-User-Id\` where a tool acts for an end user. Admin calls need a key with scope \`admin\`.

**Errors.** Every error is \`{ "ok": false, "error": "<code>", "message": "…", … }\` with the status of its code; each operation lists the codes it can answer, with an example body each. Every answer carries \`X-Request-Id\`.

**Other surfaces.** \`POST ${MCP_PATH}\` serves the same tools to Model Context Protocol clients (Streamable HTTP, stateless, same headers). \`/trpc/*\` serves every procedure below over tRPC. \`GET /healthz\`, \`GET /readyz\`, \`GET /metrics\` (Prometheus) are for operators.`;

/** Request examples shown in the reference. */
const REQUEST_EXAMPLES: Record<string, unknown> = {
  'POST /proxyV2': { toolId: 'petstore:::getPetById', parameters: { petId: 1 } },
  'POST /initiateOAuth': {
    appId: 'github',
    userId: 'user-42',
    clientRedirectUri: 'https://agent.example/oauth/done',
  },
  'POST /admin/clients': { name: 'my agent' },
  'POST /admin/clients/{clientId}/redirect-uris': { uri: 'https://agent.example/oauth/done' },
  'POST /admin/clients/{clientId}/api-keys': {
    name: 'prod',
    scopes: ['tools:execute', 'oauth:initiate', 'connections:read', 'connections:write'],
  },
  'PUT /admin/apps/{appId}': {
    provider: 'swagger.petstore',
    baseUrl: 'http://127.0.0.1:4010',
    openapi: {
      openapi: '3.0.3',
      info: { title: 'Pets', version: '1' },
      paths: {
        '/pets/{petId}': {
          get: {
            operationId: 'getPetById',
            parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'integer' } }],
            responses: { '200': { description: 'A pet' } },
          },
        },
      },
    },
    auth: { type: 'none' },
  },
};

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/**
 * /openapi.json: generated by trpc-to-openapi from the procedures (loaded on first use, so start-up
 * does not pay for it), then completed from the contract: every status each route can answer with
 * its error codes and example bodies, tags, request examples, and the paths that are not procedures.
 */
export async function buildOpenApiDocument(router: AnyRouter, publicUrl: string): Promise<OpenAPIObject> {
  const { generateOpenApiDocument } = await import('trpc-to-openapi');
  const document = generateOpenApiDocument(router as Parameters<typeof generateOpenApiDocument>[0], {
    title: 'toolgate',
    version: '0.1.0',
    description: DESCRIPTION,
    baseUrl: publicUrl,
    securitySchemes: {
      Authorization: {
        type: 'http',
        scheme: 'bearer',
        description: 'An API key (`tg_key_…`); admin routes need one with scope `admin`.',
      },
    },
  });
  document.tags = TAGS;
  document.components ??= {};
  document.components.schemas = { ...(document.components.schemas ?? {}), Error: ERROR_SCHEMA };
  document.paths ??= {};
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = (item as Record<string, Operation | undefined>)[method];
      if (!operation) continue;
      const key = `${method.toUpperCase()} ${path}`;
      const success = operation.responses?.['200'] as { headers?: Record<string, unknown> } | undefined;
      if (success) {
        success.headers = {
          'X-Request-Id': REQUEST_ID_HEADER,
          ...(key === 'POST /proxyV2'
            ? {
                'X-Service-Idempotent-Replayed': {
                  description:
                    '`true` when this is the stored answer of an earlier request with the same idempotency key.',
                  schema: { type: 'string', enum: ['true'] },
                },
              }
            : {}),
        };
      }
      operation.responses = {
        ...(success ? { '200': success } : {}),
        ...errorResponses(operationErrors(method.toUpperCase(), path)),
      };
      const example = REQUEST_EXAMPLES[key];
      const json = operation.requestBody?.content?.['application/json'];
      if (example !== undefined && json) json.example = example;
    }
  }
  Object.assign(document.paths, OTHER_PATHS);
  return document;
}

const operationsTag = ['operations'];
const text = (description: string, type = 'text/plain') => ({
  description,
  content: { [type]: { schema: { type: 'string' } } },
});

/** Paths that are not procedures, described by hand (the route table marks them documented). */
const OTHER_PATHS = {
  [CALLBACK_PATH]: {
    get: {
      operationId: 'handleOAuthCallback',
      tags: ['oauth'],
      summary: "The provider's redirect back to toolgate at the end of an end-user OAuth flow",
      description:
        'On success, 302 to the registered clientRedirectUri with `status=success`; when the state is known but ' +
        'expired, used, denied or the exchange failed, 302 with `status=error&reason=<code>`; when the state is ' +
        'missing or unknown, 400 `state_invalid`.',
      security: [],
      parameters: ['state', 'code', 'error', 'error_description', 'iss'].map((name) => ({
        name,
        in: 'query' as const,
        required: name === 'state',
        schema: { type: 'string' as const },
      })),
      responses: {
        '302': {
          description: 'Redirect to the client redirect URI with status=success or status=error&reason=…',
        },
        ...errorResponses(['state_invalid', 'method_not_allowed', 'internal_error']),
      },
    },
  },
  [COMPLETE_PATH]: {
    get: {
      operationId: 'oauthComplete',
      tags: ['oauth'],
      summary: 'The page an authorization started from MCP ends on',
      description: 'A short HTML page telling the user the outcome; it never shows a token or a code.',
      security: [],
      responses: { '200': text('HTML page', 'text/html') },
    },
  },
  [MCP_PATH]: {
    post: {
      operationId: 'mcp',
      tags: ['operations'],
      summary: 'The tools for Model Context Protocol clients (Streamable HTTP, stateless)',
      description:
        'JSON-RPC over Streamable HTTP: `tools/list` lists what `GET /tools` lists for the key, `tools/call` runs a ' +
        'tool like `POST /proxyV2`. Same headers as the agent routes; optional query `apps=<appId>,<appId>`. ' +
        'Both protocol eras are served (2026-07-28 without handshake; 2025-11-25 / 2025-06-18 with a stateless ' +
        '`initialize`). GET and DELETE answer 405. A browser `Origin` outside MCP_ALLOWED_ORIGINS, or a foreign ' +
        '`Host`, answers 403.',
      parameters: [
        {
          name: 'apps',
          in: 'query',
          required: false,
          schema: { type: 'string' },
          description: 'appId,appId',
        },
      ],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: { type: 'object' },
            example: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
          },
        },
      },
      responses: {
        '200': {
          description: 'The JSON-RPC answer (application/json or text/event-stream).',
          content: { 'application/json': { schema: { type: 'object' } } },
        },
        ...errorResponses(['invalid_api_key', 'invalid_client', 'method_not_allowed', 'internal_error']),
        '403': {
          description: 'A browser Origin not in MCP_ALLOWED_ORIGINS, or a Host this server does not serve.',
        },
      },
    },
  },
  '/healthz': {
    get: {
      operationId: 'healthz',
      tags: operationsTag,
      summary: 'The process is up',
      security: [],
      responses: { '200': { description: '`{ "ok": true }`' } },
    },
  },
  '/readyz': {
    get: {
      operationId: 'readyz',
      tags: operationsTag,
      summary: 'The database answers',
      security: [],
      responses: {
        '200': { description: '`{ "ok": true }`' },
        '503': { description: '`{ "ok": false }`: the database does not answer' },
      },
    },
  },
  '/metrics': {
    get: {
      operationId: 'metrics',
      tags: operationsTag,
      summary: 'Prometheus metrics',
      description:
        'Requests by route and status, tool calls by app, tool and outcome, upstream latency, OAuth refreshes, ' +
        'idempotency replays, rate-limit refusals, and the process metrics. Labels never hold user ids.',
      security: [],
      responses: { '200': text('Prometheus text format') },
    },
  },
  '/openapi.json': {
    get: {
      operationId: 'openapi',
      tags: operationsTag,
      summary: 'This document (OpenAPI 3.1)',
      security: [],
      responses: { '200': { description: 'OpenAPI 3.1 document', content: { 'application/json': {} } } },
    },
  },
  '/docs': {
    get: {
      operationId: 'docs',
      tags: operationsTag,
      summary: 'This reference, browsable (served offline, no CDN)',
      security: [],
      responses: { '200': text('HTML page', 'text/html') },
    },
  },
};
