/**
 * Real documents, cut down to what broke them (issue 9, docs/reference.md "Administration"), end to end through the real
 * server: what registration answers, what /tools shows, and exactly what the upstream receives.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Agent, provisionAgent, proxy } from '../support/agent.ts';
import { type EchoUpstream, startEchoUpstream } from '../support/echo-upstream.ts';
import {
  boxLike,
  discourseLike,
  githubLike,
  kubernetesLike,
  mediaTypes,
  refBomb,
  stripeLike,
  swagger2,
  twilioLike,
} from '../support/fixtures/openapi/real-cases.ts';
import { call, type Reply, startServer, type TestServer } from '../support/server.ts';
import type { RecordedRequest } from '../support/upstream.ts';

const DIALECT = 'https://json-schema.org/draft/2020-12/schema';

let server: TestServer;
let upstream: EchoUpstream;
let agent: Agent;

beforeAll(async () => {
  [server, upstream] = await Promise.all([startServer('pglite'), startEchoUpstream()]);
  agent = await provisionAgent(server, ['tools:execute']);
});
afterAll(async () => {
  await server?.close();
  await upstream?.close();
});
beforeEach(() => {
  upstream.requests.length = 0;
});

async function register(
  appId: string,
  openapi: unknown,
  auth: unknown = { type: 'none' },
  baseUrl?: string,
): Promise<Reply> {
  return call(server.url, 'PUT', `/admin/apps/${appId}`, {
    key: server.adminKey,
    body: { provider: 'acme.real', openapi, auth, ...(baseUrl ? { baseUrl } : {}) },
  });
}

async function toolsOf(
  appId: string,
): Promise<Record<string, { parameters: Record<string, unknown>; description: string }>> {
  const reply = await call(server.url, 'GET', `/tools?appId=${appId}`, {
    key: agent.apiKey,
    clientId: agent.clientId,
  });
  expect(reply.status).toBe(200);
  return Object.fromEntries(reply.body.tools.map((tool: { name: string }) => [tool.name, tool]));
}

/** Runs a tool and answers what the upstream received; the call must succeed. */
async function sent(toolId: string, parameters: Record<string, unknown>): Promise<RecordedRequest> {
  const before = upstream.requests.length;
  const reply = await proxy(server, agent, { toolId, parameters });
  expect(reply.status, reply.text).toBe(200);
  expect(reply.body.data).toEqual({ received: true });
  expect(upstream.requests.length).toBe(before + 1);
  return upstream.last();
}

describe('real documents, end to end', () => {
  it('GitHub: operationIds with "/" become tool names; x-multi-segment paths keep their "/"', async () => {
    const put = await register('github', githubLike(upstream.url));
    expect(put.body).toEqual({ appId: 'github', tools: ['meta_root', 'repos_get-content'], skipped: [] });
    const tools = await toolsOf('github');
    expect(tools['repos_get-content']?.parameters).toEqual({
      $schema: DIALECT,
      type: 'object',
      properties: {
        owner: { type: 'string' },
        repo: { type: 'string' },
        path: { description: 'path parameter', type: 'string' },
        ref: { type: 'string' },
      },
      required: ['owner', 'repo', 'path'],
      additionalProperties: false,
    });

    const root = await sent('github:::meta_root', {});
    expect([root.method, root.url]).toEqual(['GET', '/']);
    const content = await sent('github:::repos_get-content', {
      owner: 'octo',
      repo: 'hello',
      path: 'docs/a b/read?me.md',
      ref: null,
    });
    expect([content.method, content.url]).toEqual([
      'GET',
      '/repos/octo/hello/contents/docs/a%20b/read%3Fme.md',
    ]);

    for (const path of ['docs/../secrets', './x', 'a//b', '']) {
      const refused = await proxy(server, agent, {
        toolId: 'github:::repos_get-content',
        parameters: { owner: 'octo', repo: 'hello', path },
      });
      expect([refused.status, refused.body.error, refused.body.issues?.[0]?.path]).toEqual([
        400,
        'invalid_parameters',
        '/path',
      ]);
    }
    expect(upstream.requests).toHaveLength(2);
  });

  it('Stripe: form bodies in bracket notation, expand[] from encoding deepObject, read-only fields left out', async () => {
    const put = await register('stripe', stripeLike(upstream.url), {
      type: 'api_key',
      in: 'header',
      name: 'Authorization',
      value: 'Bearer sk_test_do_not_leak',
    });
    expect(put.body).toEqual({ appId: 'stripe', tools: ['PostCustomers'], skipped: [] });
    const body = (await toolsOf('stripe')).PostCustomers?.parameters.properties as Record<
      string,
      { properties: object }
    >;
    expect(Object.keys(body.body?.properties ?? {})).toEqual([
      'email',
      'expand',
      'metadata',
      'items',
      'tax_exempt',
    ]);

    const request = await sent('stripe:::PostCustomers', {
      body: {
        email: 'ada@example.com',
        expand: ['default_source', 'tax'],
        metadata: { plan: 'pro', 'team name': 'R&D' },
        items: [{ price: 'p1', quantity: 2 }, { price: 'p2' }],
        tax_exempt: '',
      },
    });
    expect(request.method).toBe('POST');
    expect(request.url).toBe('/v1/customers');
    expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(request.headers.authorization).toBe('Bearer sk_test_do_not_leak');
    expect(request.body).toBe(
      'email=ada%40example.com&expand[]=default_source&expand[]=tax&metadata[plan]=pro&metadata[team%20name]=R%26D' +
        '&items[0][price]=p1&items[0][quantity]=2&items[1][price]=p2&tax_exempt=',
    );
    const refused = await proxy(server, agent, {
      toolId: 'stripe:::PostCustomers',
      parameters: { body: { livemode: true } },
    });
    expect([refused.status, refused.body.issues]).toEqual([
      400,
      [{ path: '/body/livemode', message: 'Unknown property "livemode": the schema does not allow it.' }],
    ]);
  });

  it('Twilio: an optional form body is sent when given, and nothing at all when not', async () => {
    const put = await register('twilio', twilioLike(upstream.url));
    expect(put.body).toEqual({ appId: 'twilio', tools: ['CreateMessage'], skipped: [] });
    expect((await toolsOf('twilio')).CreateMessage?.parameters.required).toEqual(['AccountSid']);

    const message = await sent('twilio:::CreateMessage', {
      AccountSid: 'AC123',
      body: {
        To: '+15550001',
        From: '+15550002',
        Body: 'Hi there',
        MediaUrl: ['https://a.test/1.png', 'https://a.test/2.png'],
      },
    });
    expect([message.method, message.url, message.headers['content-type']]).toEqual([
      'POST',
      '/2010-04-01/Accounts/AC123/Messages.json',
      'application/x-www-form-urlencoded',
    ]);
    expect(message.body).toBe(
      'To=%2B15550001&From=%2B15550002&Body=Hi%20there&MediaUrl=https%3A%2F%2Fa.test%2F1.png&MediaUrl=https%3A%2F%2Fa.test%2F2.png',
    );
    const bare = await sent('twilio:::CreateMessage', { AccountSid: 'AC123' });
    expect([bare.body, bare.headers['content-type']]).toEqual(['', undefined]);
  });

  it('Kubernetes: a query parameter named like a path parameter becomes query.<name>', async () => {
    const put = await register('k8s', kubernetesLike(upstream.url));
    expect(put.body.tools).toEqual(['connectCoreV1GetNamespacedPodProxyWithPath']);
    const tool = (await toolsOf('k8s')).connectCoreV1GetNamespacedPodProxyWithPath;
    expect(Object.keys(tool?.parameters.properties as object)).toEqual([
      'name',
      'namespace',
      'path',
      'query.path',
    ]);
    expect(tool?.parameters.required).toEqual(['name', 'namespace', 'path']);

    const request = await sent('k8s:::connectCoreV1GetNamespacedPodProxyWithPath', {
      namespace: 'default',
      name: 'web-0',
      path: 'healthz',
      'query.path': '/ready',
    });
    expect([request.method, request.url]).toEqual([
      'GET',
      '/api/v1/namespaces/default/pods/web-0/proxy/healthz?path=%2Fready',
    ]);
  });

  it('Box: "#" in path keys and operationIds; a path key with a query sends it every time', async () => {
    const put = await register('box', boxLike(upstream.url));
    expect(put.body).toEqual({
      appId: 'box',
      tools: ['put_files_id', 'put_files_id_add_shared_link', 'get_search_type_file'],
      skipped: [],
    });
    const shared = await sent('box:::put_files_id_add_shared_link', {
      file_id: '12345',
      fields: 'shared_link',
      body: { shared_link: { access: 'open' } },
    });
    expect([shared.method, shared.url, shared.headers['content-type'], shared.body]).toEqual([
      'PUT',
      '/files/12345?fields=shared_link',
      'application/json',
      '{"shared_link":{"access":"open"}}',
    ]);
    const renamed = await sent('box:::put_files_id', { file_id: '12345', body: { name: 'a.txt' } });
    expect([renamed.url, renamed.body]).toEqual(['/files/12345', '{"name":"a.txt"}']);
    const search = await sent('box:::get_search_type_file', { query: 'q&a' });
    expect(search.url).toBe('/search?type=file&query=q%26a');
  });

  it('Discourse: the Api-Key header parameter is the service’s; the caller can neither see nor send it', async () => {
    const secret = 'discourse-key-do-not-leak';
    const put = await register('discourse', discourseLike(upstream.url), {
      type: 'api_key',
      in: 'header',
      name: 'Api-Key',
      value: secret,
    });
    expect(put.body).toEqual({ appId: 'discourse', tools: ['listPosts'], skipped: [] });
    const tool = (await toolsOf('discourse')).listPosts;
    expect(tool?.parameters.properties).toEqual({
      'Api-Username': { type: 'string' },
      before: { type: 'string' },
    });
    expect(JSON.stringify(tool)).not.toContain(secret);

    const request = await sent('discourse:::listPosts', { 'Api-Username': 'system', before: '42' });
    expect([request.url, request.headers['api-key'], request.headers['api-username']]).toEqual([
      '/posts.json?before=42',
      secret,
      'system',
    ]);
    const refused = await proxy(server, agent, {
      toolId: 'discourse:::listPosts',
      parameters: { 'Api-Username': 'system', 'Api-Key': 'mine' },
    });
    expect([refused.status, refused.body.issues]).toEqual([
      400,
      [{ path: '/Api-Key', message: 'Unknown parameter "Api-Key": the tool has no parameter of that name.' }],
    ]);
  });

  it('Swagger 2.0: converted, with its JSON body, path parameter and multipart file upload', async () => {
    const put = await register('petstore', swagger2(upstream.url));
    expect(put.body).toEqual({
      appId: 'petstore',
      tools: ['addPet', 'getPetById', 'uploadFile'],
      skipped: [],
    });
    const tools = await toolsOf('petstore');
    expect(tools.uploadFile?.parameters.properties).toEqual({
      petId: { type: 'integer' },
      body: {
        type: 'object',
        properties: {
          additionalMetadata: { type: 'string' },
          file: {
            type: 'object',
            properties: {
              base64: { type: 'string', contentEncoding: 'base64', pattern: '^[A-Za-z0-9+/]*={0,2}$' },
              filename: { type: 'string' },
              content_type: { type: 'string' },
            },
            required: ['base64'],
            additionalProperties: false,
          },
        },
        required: ['file'],
      },
    });

    const pet = await sent('petstore:::addPet', { body: { name: 'doggie', tags: ['good'] } });
    expect([pet.method, pet.url, pet.headers['content-type'], pet.body]).toEqual([
      'POST',
      '/v2/pet',
      'application/json',
      '{"name":"doggie","tags":["good"]}',
    ]);
    const got = await sent('petstore:::getPetById', { petId: 7 });
    expect([got.method, got.url]).toEqual(['GET', '/v2/pet/7']);

    const image = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff]);
    const upload = await sent('petstore:::uploadFile', {
      petId: 7,
      body: {
        additionalMetadata: 'front "view"',
        file: { base64: image.toString('base64'), filename: 'dog.png', content_type: 'image/png' },
      },
    });
    expect(upload.url).toBe('/v2/pet/7/uploadImage');
    const boundary = /^multipart\/form-data; boundary=(.+)$/.exec(upload.headers['content-type'] ?? '')?.[1];
    expect(boundary).toBeDefined();
    expect(upload.bodyBytes).toEqual(
      Buffer.concat([
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="additionalMetadata"\r\n\r\nfront "view"\r\n` +
            `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="dog.png"\r\nContent-Type: image/png\r\n\r\n`,
        ),
        image,
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]),
    );
  });

  it('text/plain as a string, any other type from base64, JSON preferred, null leaves a parameter out, deepObject arrays', async () => {
    const put = await register('media', mediaTypes(upstream.url));
    expect(put.body.tools).toEqual(['postNote', 'putImage', 'postBoth', 'search']);
    const note = await sent('media:::postNote', { body: 'Dear upstream,\nhello.' });
    expect([note.headers['content-type'], note.body]).toEqual(['text/plain', 'Dear upstream,\nhello.']);

    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a]);
    const image = await sent('media:::putImage', { body: { base64: png.toString('base64') } });
    expect([image.method, image.headers['content-type'], image.bodyBytes]).toEqual(['PUT', 'image/png', png]);
    const refused = await proxy(server, agent, {
      toolId: 'media:::putImage',
      parameters: { body: { base64: 'not base64!' } },
    });
    expect([refused.status, refused.body.issues?.[0]?.path]).toEqual([400, '/body/base64']);

    const both = await sent('media:::postBoth', { body: { a: 'x' } });
    expect([both.headers['content-type'], both.body]).toEqual(['application/json', '{"a":"x"}']);

    const search = await sent('media:::search', { q: null, 'X-Trace': null, ids: ['a', 'b c'] });
    expect([search.url, search.headers['x-trace']]).toEqual(['/search?ids[]=a&ids[]=b%20c', undefined]);
  });

  it('refuses a $ref bomb within seconds with 400 invalid_request, and stores nothing', async () => {
    const started = performance.now();
    const put = await register('bomb', refBomb(upstream.url));
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(put.status).toBe(400);
    expect(put.body).toEqual({
      ok: false,
      error: 'invalid_request',
      message: 'The app registration has problems.',
      issues: [
        {
          path: '/openapi/paths/~1bomb/post',
          message: expect.stringMatching(
            /^The request schemas of this operation would expand to more than \d+ nodes/,
          ),
        },
      ],
    });
    const shown = await call(server.url, 'GET', '/admin/apps/bomb', { key: server.adminKey });
    expect(shown.status).toBe(404);
  });
});
