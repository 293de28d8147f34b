/**
 * POST /mcp end to end (docs/reference.md "MCP") with the official clients: the v2 client pinned to 2026-07-28
 * and the v1 client with the 2025-11-25 handshake, against the real server, the real OAuth
 * provider and the real upstream. Listing, calls, failures as tool errors, authorization inside
 * the protocol (URL elicitation, -32042, authorization_url) and its retry that runs once.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HEADER } from '../../shared/headers.ts';
import { type Harness, startHarness } from '../oauth/harness.ts';
import { agentHeaders, provisionAgent } from '../support/agent.ts';
import { describeBackends } from '../support/db.ts';
import { freePort } from '../support/ports.ts';
import { call } from '../support/server.ts';
import { hits } from '../support/upstream.ts';
import { connectV1, connectV2, consent, MODERN_HEADERS, modernCall, rawMcp } from './world.ts';

const TIMEOUT_MS = 1_500;

/** N operations, for paging: `GET /echo?n=<i>` under N operationIds. */
function bulkDocument(baseUrl: string, count: number) {
  const paths: Record<string, unknown> = {};
  for (let i = 0; i < count; i += 1) {
    paths[`/echo/${i}`] = {
      get: { operationId: `op${String(i).padStart(3, '0')}`, responses: { 200: { description: 'ok' } } },
    };
  }
  return { openapi: '3.1.0', info: { title: 'bulk', version: '1' }, servers: [{ url: baseUrl }], paths };
}

describeBackends('MCP', (backend) => {
  let harness: Harness;

  beforeAll(async () => {
    const closedPort = await freePort();
    harness = await startHarness(backend.name, {
      env: { UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS) },
      apps: {
        plain: { provider: 'acme.plain' },
        bulk: { provider: 'acme.bulk', openapi: (upstream) => bulkDocument(upstream.url, 130) },
        closed: { provider: 'acme.closed', extra: { baseUrl: `http://127.0.0.1:${closedPort}` } },
      },
    });
    await harness.registerApp({ scopes: ['profile:read'] }, 'narrow');
  });

  afterAll(async () => {
    await harness?.close();
  });

  describe('tools/list', () => {
    it('lists the same tools as GET /tools, with names, titles, annotations and _meta of the contract (v2)', async () => {
      const { client, close } = await connectV2(harness, { query: '?apps=plain' });
      try {
        const listed = await client.listTools();
        const rest = await call(harness.server.url, 'GET', '/tools?appId=plain', {
          key: harness.agent.apiKey,
          clientId: harness.agent.clientId,
        });
        expect(listed.tools.map((t) => t._meta?.['toolgate/toolId'])).toEqual(
          rest.body.tools.map((t: { toolId: string }) => t.toolId),
        );
        const echo = listed.tools.find((t) => t.name === 'plain__echo');
        expect(echo).toEqual({
          name: 'plain__echo',
          title: 'Echo the request',
          description: expect.any(String),
          inputSchema: rest.body.tools.find((t: { toolId: string }) => t.toolId === 'plain:::echo')
            .parameters,
          annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
          _meta: { 'toolgate/toolId': 'plain:::echo' },
        });
        const remove = listed.tools.find((t) => t.name === 'plain__deleteItem');
        expect(remove?.annotations).toEqual({
          destructiveHint: true,
          idempotentHint: true,
          openWorldHint: true,
        });
        expect(remove?.title).toBe('Delete an item');
        const create = listed.tools.find((t) => t.name === 'plain__createItem');
        expect(create?.annotations).toEqual({ openWorldHint: true });
        const repos = listed.tools.find((t) => t.name === 'plain__listOrgRepos');
        // No summary: the title is the operationId.
        expect(repos?.title).toBe('listOrgRepos');
      } finally {
        await close();
      }
    });

    it('pages long lists with the spec cursor and narrows to `apps` (v1 and v2)', async () => {
      const v1 = await connectV1(harness, { query: '?apps=bulk,plain&mode=all' });
      try {
        const first = await v1.client.listTools();
        expect(first.tools).toHaveLength(100);
        expect(first.nextCursor).toEqual(expect.any(String));
        const second = await v1.client.listTools({ cursor: first.nextCursor });
        expect(second.nextCursor).toBeUndefined();
        const names = [...first.tools, ...second.tools].map((t) => t.name);
        expect(names.filter((n) => n.startsWith('bulk__'))).toHaveLength(130);
        expect(names.filter((n) => n.startsWith('plain__')).length).toBeGreaterThan(5);
        expect(names.some((n) => n.startsWith('demo__'))).toBe(false);
        expect(new Set(names).size).toBe(names.length);
        await expect(v1.client.listTools({ cursor: 'not-a-cursor' })).rejects.toMatchObject({ code: -32602 });
      } finally {
        await v1.close();
      }
      const v2 = await connectV2(harness, { query: '?apps=demo' });
      try {
        const all = await v2.client.listTools();
        expect(all.tools.every((t) => t.name.startsWith('demo__'))).toBe(true);
        expect(all.tools.length).toBeGreaterThan(5);
      } finally {
        await v2.close();
      }
    });

    it('hashes names longer than 64 characters the contract way', async () => {
      const appId = `a${'x'.repeat(60)}`;
      const put = await call(harness.server.url, 'PUT', `/admin/apps/${appId}`, {
        key: harness.server.adminKey,
        body: { provider: 'acme.long', openapi: harness.upstream.openapi, auth: { type: 'none' } },
      });
      expect(put.status).toBe(200);
      const { client, close } = await connectV2(harness, { query: `?apps=${appId}` });
      try {
        const { tools } = await client.listTools();
        const echo = tools.find((t) => t._meta?.['toolgate/toolId'] === `${appId}:::echo`);
        const hash = createHash('sha256').update(`${appId}:::echo`).digest('hex').slice(0, 8);
        expect(echo?.name).toBe(`${`${appId}__echo`.slice(0, 55)}_${hash}`);
        const result = await client.callTool({ name: echo?.name as string, arguments: {} });
        expect(result.isError).toBeUndefined();
      } finally {
        await close();
      }
    });

    it('keeps names unique when two tools share one plain name: each takes the hashed form and runs itself', async () => {
      // `cx__y` + `echo` and `cx` + `y__echo` are both cx__y__echo by the plain rule.
      const echoDocument = (operationId: string) => ({
        openapi: '3.0.3',
        info: { title: 'echo', version: '1' },
        servers: [{ url: harness.upstream.url }],
        paths: { '/echo': { get: { operationId, responses: { 200: { description: 'ok' } } } } },
      });
      for (const [appId, operationId] of [
        ['cx__y', 'echo'],
        ['cx', 'y__echo'],
      ]) {
        const put = await call(harness.server.url, 'PUT', `/admin/apps/${appId}`, {
          key: harness.server.adminKey,
          body: {
            provider: 'acme.echo',
            openapi: echoDocument(operationId as string),
            auth: { type: 'none' },
          },
        });
        expect(put.status).toBe(200);
      }
      const hashed = (toolId: string) =>
        `cx__y__echo_${createHash('sha256').update(toolId).digest('hex').slice(0, 8)}`;
      const { client, close } = await connectV2(harness, { query: '?apps=cx,cx__y' });
      const search = await connectV2(harness, { query: '?apps=cx,cx__y&mode=search' });
      try {
        const { tools } = await client.listTools();
        expect(tools.map((t) => [t.name, t._meta?.['toolgate/toolId']])).toEqual([
          [hashed('cx:::y__echo'), 'cx:::y__echo'],
          [hashed('cx__y:::echo'), 'cx__y:::echo'],
        ]);
        for (const toolId of ['cx:::y__echo', 'cx__y:::echo']) {
          const ran = await client.callTool({ name: hashed(toolId), arguments: {} });
          expect(ran.structuredContent).toMatchObject({ ok: true, meta: { tool_id: toolId } });
          const viaPair = await search.client.callTool({
            name: 'call_tool',
            arguments: { name: hashed(toolId), arguments: {} },
          });
          expect(viaPair.structuredContent).toMatchObject({ ok: true, meta: { tool_id: toolId } });
        }
        // The shared plain name stands for neither tool.
        await expect(client.callTool({ name: 'cx__y__echo', arguments: {} })).rejects.toThrow(/Unknown tool/);
        // search_tools answers the names tools/list gives.
        const found = await search.client.callTool({
          name: 'search_tools',
          arguments: { query: 'echo', apps: ['cx__y'] },
        });
        expect(
          (found.structuredContent as { tools: Array<{ name: string; toolId: string }> }).tools.map((t) => [
            t.name,
            t.toolId,
          ]),
        ).toEqual([[hashed('cx__y:::echo'), 'cx__y:::echo']]);
      } finally {
        await Promise.all([close(), search.close()]);
      }
      // Alone in a list (apps=cx__y), the tool keeps its plain name.
      const alone = await connectV2(harness, { query: '?apps=cx__y' });
      try {
        const { tools } = await alone.client.listTools();
        expect(tools.map((t) => t.name)).toEqual(['cx__y__echo']);
        const ran = await alone.client.callTool({ name: 'cx__y__echo', arguments: {} });
        expect(ran.structuredContent).toMatchObject({ ok: true, meta: { tool_id: 'cx__y:::echo' } });
      } finally {
        await alone.close();
      }
    });
  });

  describe('tools/call', () => {
    for (const era of ['v2', 'v1'] as const) {
      const connect = era === 'v2' ? connectV2 : connectV1;

      it(`answers the envelope as structuredContent and text (${era})`, async () => {
        const { client, close } = await connect(harness, {});
        try {
          const result = await client.callTool({ name: 'plain__getItem', arguments: { itemId: 'a b' } });
          const envelope = result.structuredContent as {
            ok: boolean;
            data: unknown;
            meta: { duration_ms: number };
          };
          expect(envelope).toEqual({
            ok: true,
            data: { id: 'a b', title: expect.any(String) },
            meta: {
              tool_id: 'plain:::getItem',
              duration_ms: envelope.meta.duration_ms,
              provider: 'acme.plain',
            },
          });
          expect(result.content).toEqual([{ type: 'text', text: JSON.stringify(envelope) }]);
          expect(result.isError).toBeUndefined();
        } finally {
          await close();
        }
      });

      it(`maps each failure to a tool error with the contract body (${era})`, async () => {
        const { client, close } = await connect(harness, {});
        const toolError = async (name: string, args: Record<string, unknown>) => {
          const result = await client.callTool({ name, arguments: args });
          expect(result.isError).toBe(true);
          const body = result.structuredContent as Record<string, unknown>;
          const content = result.content as Array<{ type: string; text: string }>;
          expect(content).toHaveLength(1);
          expect(content[0]?.text.endsWith(`\n${JSON.stringify(body)}`)).toBe(true);
          return body;
        };
        try {
          expect(await toolError('plain__getItem', {})).toEqual({
            ok: false,
            error: 'invalid_parameters',
            message: 'The parameters do not match the tool.',
            tool_id: 'plain:::getItem',
            issues: [{ path: '/itemId', message: expect.any(String) }],
          });
          expect(await toolError('plain__getStatus', { code: 503 })).toMatchObject({
            ok: false,
            error: 'upstream_error',
            upstream_status: 503,
          });
          expect(await toolError('closed__echo', {})).toEqual({
            ok: false,
            error: 'upstream_unreachable',
            message: 'The upstream could not be reached: the connection was refused.',
          });
          expect(await toolError('plain__slow', { ms: TIMEOUT_MS * 3 })).toEqual({
            ok: false,
            error: 'upstream_timeout',
            message: 'The upstream did not answer in time.',
          });
          // An oauth2 tool without X-Service-User-Id on the connection.
          expect(await toolError('demo__getMe', {})).toMatchObject({ ok: false, error: 'invalid_request' });
        } finally {
          await close();
        }
      });

      it(`answers -32602 for an unknown tool, a ::: name and a tool of an app outside \`apps\` (${era})`, async () => {
        const before = harness.upstream.requests.length;
        const { client, close } = await connect(harness, { query: '?apps=plain' });
        try {
          for (const name of ['plain__nope', 'plain:::echo', 'demo__getMe', '']) {
            await expect(client.callTool({ name, arguments: {} })).rejects.toMatchObject({ code: -32602 });
          }
        } finally {
          await close();
        }
        expect(harness.upstream.requests.length).toBe(before);
      });
    }

    it('answers rbac_denied when the user grant lacks a scope the tool declares', async () => {
      const userId = 'scoped-user';
      await consentDirect(harness, userId, 'narrow');
      const { client, close } = await connectV2(harness, { userId });
      try {
        const result = await client.callTool({
          name: 'narrow__createNote',
          arguments: { body: { text: 'x' } },
        });
        expect(result.isError).toBe(true);
        expect(result.structuredContent).toEqual({
          ok: false,
          error: 'rbac_denied',
          message: "The user's authorization lacks the scope notes:write this tool needs.",
          reason: 'scope_missing',
          scope: 'notes:write',
        });
      } finally {
        await close();
      }
    });
  });

  describe('authentication and DNS-rebinding defence', () => {
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });

    it('answers 401 with the contract body and WWW-Authenticate: Bearer for a missing, unknown or revoked key', async () => {
      const missing = await rawMcp(harness.server.url, initialize, {});
      expect(missing.status).toBe(401);
      expect(missing.headers.get('www-authenticate')).toBe('Bearer');
      expect(missing.json).toEqual({
        ok: false,
        error: 'invalid_api_key',
        message: 'The API key is missing, malformed, unknown or revoked.',
      });

      const agent = await provisionAgent(harness.server, ['tools:execute']);
      const wrongClient = await rawMcp(harness.server.url, initialize, {
        ...agentHeaders(agent),
        [HEADER.clientId]: harness.agent.clientId,
      });
      expect(wrongClient.status).toBe(401);
      expect(wrongClient.headers.get('www-authenticate')).toBe('Bearer');
      expect(wrongClient.json).toMatchObject({ error: 'invalid_client' });

      const { client, close } = await connectV2(harness, { agent });
      expect((await client.listTools()).tools.length).toBeGreaterThan(0);
      const revoked = await call(harness.server.url, 'DELETE', `/admin/api-keys/${agent.keyId}`, {
        key: harness.server.adminKey,
      });
      expect(revoked.status).toBe(200);
      await expect
        .poll(() => rawMcp(harness.server.url, initialize, agentHeaders(agent)).then((r) => r.status), {
          timeout: 10_000,
        })
        .toBe(401);
      await expect(client.listTools()).rejects.toThrow();
      await close();
      await expect(connectV1(harness, { agent })).rejects.toThrow();
    });

    it('answers 403 to a browser Origin not in MCP_ALLOWED_ORIGINS and to a foreign Host', async () => {
      const origin = await rawMcp(harness.server.url, initialize, {
        ...agentHeaders(harness.agent),
        origin: 'https://evil.example',
      });
      expect(origin.status).toBe(403);
      expect(origin.json).toEqual({
        jsonrpc: '2.0',
        error: { code: -32000, message: 'This Origin may not call /mcp (MCP_ALLOWED_ORIGINS).' },
        id: null,
      });
      const nullOrigin = await rawMcp(harness.server.url, initialize, {
        ...agentHeaders(harness.agent),
        origin: 'null',
      });
      expect(nullOrigin.status).toBe(403);

      // fetch cannot set Host: a raw request does.
      const { request } = await import('node:http');
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(
          new URL('/mcp', harness.server.url),
          {
            method: 'POST',
            headers: {
              host: 'rebound.example',
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
              ...agentHeaders(harness.agent),
            },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end(initialize);
      });
      expect(status).toBe(403);
    });

    it('answers 405 to GET and DELETE, and no Mcp-Session-Id ever', async () => {
      for (const method of ['GET', 'DELETE']) {
        const reply = await fetch(new URL('/mcp', harness.server.url), {
          method,
          headers: { ...agentHeaders(harness.agent), accept: 'text/event-stream' },
        });
        expect(reply.status).toBe(405);
        expect(reply.headers.get('allow')).toBe('POST');
        await reply.text();
      }
      for (const version of ['2025-11-25', '2025-06-18']) {
        const init = await rawMcp(
          harness.server.url,
          initialize.replace('2025-11-25', version),
          agentHeaders(harness.agent),
        );
        expect(init.status).toBe(200);
        expect(init.headers.get('mcp-session-id')).toBeNull();
        // The legacy leg answers on an SSE stream: one `data:` line holding the result.
        const data = JSON.parse(/^data: (.*)$/m.exec(init.text)?.[1] ?? 'null');
        expect(data.result.protocolVersion).toBe(version);
        expect(data.result.capabilities).toEqual({ tools: {} });
      }
    });
  });

  describe('authorization inside MCP', () => {
    it('v2: input-required with one URL elicitation; after consent the retry runs the tool once', async () => {
      const userId = 'mcp-v2-user';
      const before = hits(harness.upstream, '/me');
      const { client, elicited, close } = await connectV2(harness, { userId });
      try {
        const result = await client.callTool({ name: 'demo__getMe', arguments: {} });
        expect(result.isError).toBeUndefined();
        expect(result.structuredContent).toMatchObject({ ok: true, meta: { tool_id: 'demo:::getMe' } });
        expect(elicited).toHaveLength(1);
        expect(elicited[0]?.message).toContain('demo');
        const url = new URL(elicited[0]?.url as string);
        expect(url.origin).toBe(new URL(harness.provider.authorizationUrl).origin);
        expect(url.searchParams.get('redirect_uri')).toBe('http://toolgate.test/handleOAuthCallback');
        expect(hits(harness.upstream, '/me')).toBe(before + 1);
        // Connected now: the next call runs at once, without elicitation.
        await client.callTool({ name: 'demo__getMe', arguments: {} });
        expect(elicited).toHaveLength(1);
      } finally {
        await close();
      }
    });

    it('v2: the flow ends on /oauth/complete, a page with no token or code', async () => {
      const userId = 'page-user';
      let page: Awaited<ReturnType<typeof consent>> | undefined;
      const { client, close } = await connectV2(harness, {
        userId,
        onElicit: async (url) => {
          page = await consent(harness, url, userId);
          return 'accept';
        },
      });
      try {
        await client.callTool({ name: 'demo__getMe', arguments: {} });
      } finally {
        await close();
      }
      expect(page?.callback.status).toBe(302);
      expect(page?.location).toMatch(/^http:\/\/toolgate\.test\/oauth\/complete\?flow=ost_[a-z0-9]{20}$/);
      expect(page?.page.status).toBe(200);
      expect(page?.page.html).toContain('<strong>demo</strong> is now connected');
      for (const secret of harness.provider.secrets()) expect(page?.page.html).not.toContain(secret);
    });

    it('v2: a declined consent leaves the tool unrun and answers the tool error with authorization_url', async () => {
      const userId = 'declining-user';
      const before = hits(harness.upstream, '/me');
      let asked = 0;
      const { client, close } = await connectV2(harness, {
        userId,
        onElicit: async () => {
          asked += 1;
          return 'decline';
        },
      });
      try {
        const result = await client.callTool({ name: 'demo__getMe', arguments: {} });
        expect(result.isError).toBe(true);
        expect(result.structuredContent).toMatchObject({
          error: 'auth_required',
          app_id: 'demo',
          authorization_url: expect.stringContaining(harness.provider.authorizationUrl),
        });
      } finally {
        await close();
      }
      expect(asked).toBe(1);
      expect(hits(harness.upstream, '/me')).toBe(before);
    });

    it('v2 (raw): a retry of the same requestState runs the tool once; a forged or altered one is refused', async () => {
      const userId = 'raw-user';
      const headers = {
        ...agentHeaders(harness.agent, userId),
        ...MODERN_HEADERS,
        'mcp-name': 'demo__getMe',
      };
      const first = await rawMcp(harness.server.url, modernCall(1, 'demo__getMe', {}), headers);
      expect(first.status).toBe(200);
      const answer = (first.json as { result: Record<string, unknown> }).result;
      expect(answer).toMatchObject({
        resultType: 'input_required',
        inputRequests: {
          authorize: {
            method: 'elicitation/create',
            params: { mode: 'url', url: expect.any(String), message: expect.any(String) },
          },
        },
        requestState: expect.any(String),
      });
      const state = answer.requestState as string;
      const url = (answer.inputRequests as { authorize: { params: { url: string } } }).authorize.params.url;

      // Before consent: a retry answers a fresh input-required, and nothing runs.
      const early = await rawMcp(
        harness.server.url,
        modernCall(2, 'demo__getMe', {}, { requestState: state }),
        headers,
      );
      expect((early.json as { result: { resultType: string } }).result.resultType).toBe('input_required');

      await consent(harness, url, userId);
      const before = hits(harness.upstream, '/me');
      const retry = (id: number, requestState = state, name = 'demo__getMe') =>
        rawMcp(
          harness.server.url,
          modernCall(id, name, {}, { requestState, inputResponses: { authorize: { action: 'accept' } } }),
          { ...headers, 'mcp-name': name },
        );
      const [a, b] = await Promise.all([retry(3), retry(4)]);
      const results = [a, b].map(
        (r) => r.json as { result?: { structuredContent?: unknown }; error?: unknown },
      );
      // One ran; the other replayed it (or, still running, was refused as a tool error): never twice.
      expect(hits(harness.upstream, '/me')).toBe(before + 1);
      const again = await retry(5);
      expect((again.json as { result: { structuredContent: unknown } }).result.structuredContent).toEqual(
        results.find((r) => (r.result?.structuredContent as { ok?: boolean })?.ok)?.result?.structuredContent,
      );
      expect(hits(harness.upstream, '/me')).toBe(before + 1);

      const [body, mac] = state.slice(3).split('.') as [string, string];
      const payload = JSON.parse(Buffer.from(body, 'base64url').toString());
      const altered = `v1.${Buffer.from(JSON.stringify({ ...payload, p: { ...payload.p, t: 'plain:::echo' } })).toString('base64url')}.${mac}`;
      for (const forged of [altered, 'v1.e30.AAAA', `${state}x`, 'garbage']) {
        const refused = await retry(6, forged);
        expect(refused.json).toMatchObject({
          error: { code: -32602, message: 'Invalid or expired requestState' },
        });
      }
      // A genuine state of one tool does not unlock another.
      const otherTool = await retry(7, state, 'demo__createNote');
      expect(otherTool.json).toMatchObject({ error: { code: -32602 } });
      // Nor does it work for another user of the same key.
      const otherUser = await rawMcp(
        harness.server.url,
        modernCall(8, 'demo__getMe', {}, { requestState: state }),
        { ...headers, [HEADER.userId]: 'someone-else' },
      );
      expect(otherUser.json).toMatchObject({ error: { code: -32602 } });
      expect(hits(harness.upstream, '/me')).toBe(before + 1);
    });

    it('v1 with URL elicitation: -32042 carrying the URL; after consent the retried call runs once', async () => {
      const userId = 'mcp-v1-user';
      const { client, close } = await connectV1(harness, { userId });
      const before = hits(harness.upstream, '/me');
      try {
        const error = await client.callTool({ name: 'demo__getMe', arguments: {} }).then(
          () => null,
          (e: {
            code: number;
            data: { elicitations: Array<{ mode: string; url: string; message: string }> };
          }) => e,
        );
        expect(error?.code).toBe(-32042);
        expect(error?.data.elicitations).toHaveLength(1);
        expect(error?.data.elicitations[0]).toMatchObject({
          mode: 'url',
          message: expect.stringContaining('demo'),
        });
        expect(hits(harness.upstream, '/me')).toBe(before);
        const done = await consent(harness, error?.data.elicitations[0]?.url as string, userId);
        expect(done.page.html).toContain('<strong>demo</strong> is now connected');
        const result = await client.callTool({ name: 'demo__getMe', arguments: {} });
        expect(result.structuredContent).toMatchObject({ ok: true, meta: { tool_id: 'demo:::getMe' } });
        expect(hits(harness.upstream, '/me')).toBe(before + 1);
      } finally {
        await close();
      }
    });

    for (const era of ['v2', 'v1'] as const) {
      it(`${era} without URL elicitation: a tool error with authorization_url`, async () => {
        const userId = `plain-${era}-user`;
        const connect = era === 'v2' ? connectV2 : connectV1;
        const { client, close } = await connect(harness, { userId, urlElicitation: false });
        try {
          const result = await client.callTool({ name: 'demo__getMe', arguments: {} });
          expect(result.isError).toBe(true);
          const body = result.structuredContent as Record<string, string>;
          expect(body).toEqual({
            ok: false,
            error: 'auth_required',
            message: 'This tool needs the user to authorize the app first.',
            auth_endpoint: '/initiateOAuth',
            app_id: 'demo',
            authorization_url: expect.stringContaining(harness.provider.authorizationUrl),
          });
          const text = (result.content as Array<{ text: string }>)[0]?.text ?? '';
          expect(text).toContain('show them authorization_url');
          // The link works: after consent, the same call succeeds.
          await consent(harness, body.authorization_url as string, userId);
          const after = await client.callTool({ name: 'demo__getMe', arguments: {} });
          expect(after.isError).toBeUndefined();
        } finally {
          await close();
        }
      });
    }
  });

  describe('bad input: a JSON-RPC or contract error, never a 500, nothing executed', () => {
    it('refuses malformed JSON, a wrong content type, a batch, a huge body and odd messages', async () => {
      const headers = agentHeaders(harness.agent, 'u');
      const before = harness.upstream.requests.length;
      const malformed = await rawMcp(harness.server.url, '{"jsonrpc":', headers);
      expect(malformed.status).toBe(400);
      expect(malformed.json).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 }, id: null });

      const deep = await rawMcp(harness.server.url, `${'['.repeat(200)}${']'.repeat(200)}`, headers);
      expect(deep.status).toBe(400);

      const text = await rawMcp(harness.server.url, 'hello', { ...headers, 'content-type': 'text/plain' });
      expect(text.status).toBe(415);
      expect(text.json).toEqual({
        ok: false,
        error: 'unsupported_media_type',
        message: 'The body must be application/json.',
      });

      const batch = await rawMcp(
        harness.server.url,
        JSON.stringify([
          JSON.parse(modernCall(1, 'plain__echo', {})),
          JSON.parse(modernCall(2, 'plain__echo', {})),
        ]),
        { ...headers, ...MODERN_HEADERS },
      );
      expect(batch.status).toBe(400);
      expect(batch.json).toMatchObject({ error: { code: -32600 } });

      const huge = await rawMcp(
        harness.server.url,
        modernCall(3, 'plain__echo', { blob: 'x'.repeat(2 * 1024 * 1024) }),
        { ...headers, ...MODERN_HEADERS, 'mcp-name': 'plain__echo' },
      );
      expect(huge.status).toBe(413);
      expect(huge.json).toEqual({
        ok: false,
        error: 'payload_too_large',
        message: `The body is larger than ${1024 * 1024} bytes.`,
        limit: 1024 * 1024,
      });

      for (const odd of [
        'null',
        '42',
        '"x"',
        '{}',
        '{"jsonrpc":"2.0","id":1}',
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"x"}',
      ]) {
        const reply = await rawMcp(harness.server.url, odd, headers);
        expect(reply.status, odd).toBeLessThan(500);
      }
      const noArgs = await rawMcp(
        harness.server.url,
        JSON.stringify({
          ...JSON.parse(modernCall(4, 'plain__getItem', {})),
          params: {
            name: 'plain__getItem',
            arguments: 'x',
            _meta: JSON.parse(modernCall(4, 'x', {})).params._meta,
          },
        }),
        { ...headers, ...MODERN_HEADERS, 'mcp-name': 'plain__getItem' },
      );
      expect(noArgs.status).toBeLessThan(500);
      expect(noArgs.json).toMatchObject({ error: { code: -32602 } });

      const proto = await rawMcp(
        harness.server.url,
        modernCall(5, 'plain__echo', {}).replace('"arguments":{}', '"arguments":{"__proto__":{"x":1}}'),
        { ...headers, ...MODERN_HEADERS, 'mcp-name': 'plain__echo' },
      );
      expect(
        (proto.json as { result: { isError: boolean; structuredContent: { error: string } } }).result,
      ).toMatchObject({
        isError: true,
        structuredContent: { error: 'invalid_parameters' },
      });
      expect(harness.upstream.requests.length).toBe(before);
    });

    it('refuses a user id with a control character before anything is stored or run', async () => {
      const headers = {
        ...agentHeaders(harness.agent, 'u\tx'),
        ...MODERN_HEADERS,
        'mcp-name': 'plain__echo',
      };
      const before = harness.upstream.requests.length;
      const reply = await rawMcp(harness.server.url, modernCall(6, 'plain__echo', {}), headers);
      const message = 'X-Service-User-Id must be 1 to 256 characters, none of them a control character.';
      expect(reply.status).toBe(400);
      expect(reply.json).toEqual({
        ok: false,
        error: 'invalid_request',
        message,
        issues: [{ path: '', message }],
      });
      expect(harness.upstream.requests.length).toBe(before);
    });
  });
});

/** initiate → consent → callback for `appId` through REST, the way a non-MCP agent connects a user. */
async function consentDirect(harness: Harness, userId: string, appId: string): Promise<void> {
  const reply = await harness.connect(userId, { appId });
  expect(reply.status).toBe(302);
}
