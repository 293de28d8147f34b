import type { AnyRouter } from '@trpc/server';
import type { OpenAPIObject } from 'trpc-to-openapi';
import { apiError, ERROR_STATUS, type ErrorBody, type ErrorCode } from '../../shared/errors.ts';
import { invalidApiKey, invalidClient } from '../auth/agent.ts';
import { MCP_PATH } from '../mcp/path.ts';
import { collectRoutes } from './rest.ts';

type SchemaObject = NonNullable<NonNullable<OpenAPIObject['components']>['schemas']>[string];
type Operation = {
  tags?: string[];
  parameters?: { in: string; name: string }[];
  security?: Record<string, string[]>[];
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
      tool_id: 'pets:::getPetById',
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
    example: invalidApiKey(),
  },
  invalid_client: {
    when: 'X-Service-Client-Id is missing or unknown, or the key was not issued to that client',
    example: invalidClient(),
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
    example: apiError('rbac_denied', 'The API key lacks the scope tools:execute:pets.', {
      reason: 'scope_missing',
      scope: 'tools:execute:pets',
    }),
  },
  tool_not_found: {
    when: 'the app or the tool is unknown (also a non-composite toolId without X-Service-App-Id)',
    example: apiError('tool_not_found', 'No tool pets:::getPet.', { tool_id: 'pets:::getPet' }),
  },
  app_not_found: {
    when: 'no app has this id',
    example: apiError('app_not_found', 'No app pets is registered.', { app_id: 'pets' }),
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
    when: 'the API key made RATE_LIMIT_PER_KEY_PER_MIN calls (tool calls and OAuth flow starts) in the last 60 s; `Retry-After` and `retry_after` give the seconds to wait',
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
    when: 'the upstream (or its token endpoint) could not be reached: connection refused, DNS or TLS failure; the message says which kind',
    example: apiError(
      'upstream_unreachable',
      'The upstream could not be reached: the connection was refused.',
    ),
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

/**
 * The codes an operation can answer: those it declares (`meta.errors` of a procedure), the body
 * errors of a body, and the ones of every route; in the contract table's order.
 */
function operationErrors(method: string, own: readonly ErrorCode[] = []): ErrorCode[] {
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
export function errorResponses(codes: ErrorCode[]): Record<string, unknown> {
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
    '`retry_after`, `upstream_status`, `upstream_body`, `cause`): see the examples of each status.',
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

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

const CLIENT_ID_SCHEME = 'ClientId';
const CLIENT_ID_HEADER = 'X-Service-Client-Id';

/**
 * The client id as a security scheme beside the bearer key rather than a header parameter of each
 * agent operation: Swagger UI's Authorize then takes both once, and "Try it out" sends both.
 */
function clientIdAsSecurity(operation: Operation): void {
  if (!operation.security) return; // a public route
  const parameters = operation.parameters ?? [];
  const clientId = parameters.findIndex(
    (p) => p.in === 'header' && p.name.toLowerCase() === CLIENT_ID_HEADER.toLowerCase(),
  );
  // The generator lists every scheme as an alternative; the key is always needed, the id on agent routes.
  if (clientId === -1) {
    operation.security = [{ Authorization: [] }];
    return;
  }
  operation.parameters = parameters.filter((_, index) => index !== clientId);
  operation.security = [{ Authorization: [], [CLIENT_ID_SCHEME]: [] }];
}

/** A route that is not a procedure, with the OpenAPI operation it carries (route-table.ts). */
export interface DescribedRoute {
  method: string;
  path: string;
  openapi?: Record<string, unknown> | undefined;
}

/**
 * /openapi.json: generated by trpc-to-openapi from the procedures (loaded on first use, so start-up
 * does not pay for it), then completed from what each procedure's meta declares (trpc.ts
 * `ProcedureMeta`: the error codes with their example bodies, request examples, success headers),
 * tags, and the operations the other routes carry.
 */
export async function buildOpenApiDocument(
  router: AnyRouter,
  publicUrl: string,
  otherRoutes: readonly DescribedRoute[],
): Promise<OpenAPIObject> {
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
      [CLIENT_ID_SCHEME]: {
        type: 'apiKey',
        in: 'header',
        name: CLIENT_ID_HEADER,
        description: 'The public id of the client the API key was issued to (`cli_…`); agent routes need it.',
      },
    },
  });
  document.tags = TAGS;
  document.components ??= {};
  document.components.schemas = { ...(document.components.schemas ?? {}), Error: ERROR_SCHEMA };
  document.paths ??= {};
  const metas = new Map(
    collectRoutes(router).map((route) => [`${route.method} ${route.template}`, route.meta]),
  );
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = (item as Record<string, Operation | undefined>)[method];
      if (!operation) continue;
      const meta = metas.get(`${method.toUpperCase()} ${path}`);
      const success = operation.responses?.['200'] as
        | { headers?: Record<string, unknown>; content?: Record<string, Record<string, unknown>> }
        | undefined;
      if (success) success.headers = { 'X-Request-Id': REQUEST_ID_HEADER, ...meta?.successHeaders };
      const successJson = success?.content?.['application/json'];
      if (meta?.successExample !== undefined && successJson) successJson.example = meta.successExample;
      clientIdAsSecurity(operation);
      operation.responses = {
        ...(success ? { '200': success } : {}),
        ...errorResponses(operationErrors(method.toUpperCase(), meta?.errors)),
      };
      const json = operation.requestBody?.content?.['application/json'];
      if (meta?.example !== undefined && json) json.example = meta.example;
    }
  }
  const paths = document.paths as Record<string, Record<string, unknown>>;
  for (const { method, path, openapi } of otherRoutes) {
    if (openapi) paths[path] = { ...paths[path], [method.toLowerCase()]: openapi };
  }
  return document;
}

/** A response whose body is text of `type`. */
export const textResponse = (description: string, type = 'text/plain') => ({
  description,
  content: { [type]: { schema: { type: 'string' } } },
});
