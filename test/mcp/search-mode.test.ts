/**
 * MCP search mode end to end (docs/reference.md "Tool search"), with both official clients: a
 * catalog of 1,000+ tools is two tools by default, `search_tools` finds any tool by a task, and
 * `call_tool` runs it exactly as `tools/call` would — including an oauth2 tool whose consent
 * arrives by URL elicitation, run once after it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../oauth/harness.ts';
import { agentHeaders } from '../support/agent.ts';
import { describeBackends } from '../support/db.ts';
import { call } from '../support/server.ts';
import { hits } from '../support/upstream.ts';
import { connectV1, connectV2, consent, rawMcp } from './world.ts';

/** 1,100 operations: 1,098 dull ones and two a task can name. */
function largeDocument(baseUrl: string) {
  const paths: Record<string, unknown> = {};
  for (let i = 0; i < 1_098; i += 1) {
    paths[`/records/${i}`] = {
      get: {
        operationId: `getRecord${i}`,
        summary: `Get record ${i}`,
        responses: { 200: { description: 'ok' } },
      },
    };
  }
  paths['/keys/{keyId}/rotate'] = {
    post: {
      operationId: 'rotateEncryptionKey',
      summary: 'Rotate an encryption key',
      description: 'Replaces the key material of an encryption key; data encrypted before stays readable.',
      parameters: [{ name: 'keyId', in: 'path', required: true, schema: { type: 'string' } }],
      responses: { 200: { description: 'ok' } },
    },
  };
  paths['/mailboxes/{mailbox}/archive'] = {
    post: {
      operationId: 'archiveMailbox',
      summary: 'Archive a mailbox',
      parameters: [{ name: 'mailbox', in: 'path', required: true, schema: { type: 'string' } }],
      responses: { 200: { description: 'ok' } },
    },
  };
  return { openapi: '3.1.0', info: { title: 'Vault', version: '1' }, servers: [{ url: baseUrl }], paths };
}

type Listed = { name: string; inputSchema: unknown; annotations?: unknown };

describeBackends('MCP search mode', (backend) => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness(backend.name, {
      apps: {
        vault: { provider: 'acme.vault', openapi: (upstream) => largeDocument(upstream.url) },
        plain: { provider: 'acme.plain' },
      },
    });
  });
  afterAll(async () => {
    await harness?.close();
  });

  const toolsOf = (listed: { tools: Listed[] }) => listed.tools.map((tool) => tool.name);

  it('lists exactly search_tools and call_tool for a catalog of 1,000+ tools (v2 and v1)', async () => {
    const v2 = await connectV2(harness);
    const v1 = await connectV1(harness);
    try {
      for (const client of [v2.client, v1.client]) {
        const listed = await client.listTools();
        expect(toolsOf(listed)).toEqual(['search_tools', 'call_tool']);
        expect(listed.nextCursor).toBeUndefined();
        expect(listed.tools[0]?.inputSchema).toMatchObject({
          type: 'object',
          properties: {
            query: { type: 'string' },
            apps: { type: 'array' },
            limit: { type: 'integer', maximum: 20 },
          },
          required: ['query'],
        });
        expect(listed.tools[1]?.inputSchema).toMatchObject({
          type: 'object',
          properties: { name: { type: 'string' }, arguments: { type: 'object' } },
        });
      }
    } finally {
      await Promise.all([v2.close(), v1.close()]);
    }
  });

  it('lists the catalog with mode=all (paged) and for a small catalog (auto); the pair with mode=search', async () => {
    const all = await connectV1(harness, { query: '?mode=all' });
    const small = await connectV2(harness, { query: '?apps=plain' });
    const forced = await connectV2(harness, { query: '?apps=plain&mode=search' });
    try {
      const names: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await all.client.listTools(cursor ? { cursor } : {});
        names.push(...toolsOf(page));
        cursor = page.nextCursor;
      } while (cursor);
      const rest = await call(harness.server.url, 'GET', '/tools?limit=1000', {
        key: harness.agent.apiKey,
        clientId: harness.agent.clientId,
      });
      const restNext = await call(
        harness.server.url,
        'GET',
        `/tools?limit=1000&cursor=${rest.body.next_cursor}`,
        {
          key: harness.agent.apiKey,
          clientId: harness.agent.clientId,
        },
      );
      expect(names).toHaveLength(rest.body.tools.length + restNext.body.tools.length);
      expect(names.length).toBeGreaterThan(1_100);
      const plain = toolsOf(await small.client.listTools());
      expect(plain.length).toBeGreaterThan(5);
      expect(plain.every((name) => name.startsWith('plain__'))).toBe(true);
      expect(toolsOf(await forced.client.listTools())).toEqual(['search_tools', 'call_tool']);
    } finally {
      await Promise.all([all.close(), small.close(), forced.close()]);
    }
  });

  it('search_tools finds a tool by a task, with its MCP name, id, title, description and schema', async () => {
    const { client, close } = await connectV2(harness);
    try {
      const result = await client.callTool({
        name: 'search_tools',
        arguments: { query: 'rotate my encryption key', limit: 3 },
      });
      expect(result.isError).toBeUndefined();
      const found = (result.structuredContent as { tools: Array<Record<string, unknown>> }).tools;
      expect(found.length).toBeGreaterThan(0);
      expect(found.length).toBeLessThanOrEqual(3);
      expect(found[0]).toEqual({
        name: 'vault__rotateEncryptionKey',
        toolId: 'vault:::rotateEncryptionKey',
        title: 'Rotate an encryption key',
        description: 'Replaces the key material of an encryption key; data encrypted before stays readable.',
        inputSchema: expect.objectContaining({ type: 'object', required: ['keyId'] }),
        requiresUserAuth: false,
      });
      expect(JSON.parse((result.content as Array<{ text: string }>)[0]?.text as string)).toEqual(
        result.structuredContent,
      );
      // apps narrows, and a default of 8.
      const plainOnly = await client.callTool({
        name: 'search_tools',
        arguments: { query: 'item', apps: ['plain'] },
      });
      const plainFound = (plainOnly.structuredContent as { tools: Array<{ toolId: string }> }).tools;
      expect(plainFound.length).toBeGreaterThan(0);
      expect(plainFound.length).toBeLessThanOrEqual(8);
      expect(plainFound.every((tool) => tool.toolId.startsWith('plain:::'))).toBe(true);
      const oauth = await client.callTool({
        name: 'search_tools',
        arguments: { query: 'the signed-in user', apps: ['demo'] },
      });
      expect(
        (oauth.structuredContent as { tools: Array<{ requiresUserAuth: boolean }> }).tools[0]
          ?.requiresUserAuth,
      ).toBe(true);
    } finally {
      await close();
    }
  });

  it('call_tool runs a tool by its MCP name or toolId exactly as tools/call does', async () => {
    const { client, close } = await connectV2(harness, { query: '?mode=search' });
    const direct = await connectV2(harness, { query: '?mode=all' });
    try {
      const before = hits(harness.upstream, '/echo');
      const viaName = await client.callTool({
        name: 'call_tool',
        arguments: { name: 'plain__echo', arguments: { q: 'x' } },
      });
      const viaId = await client.callTool({
        name: 'call_tool',
        arguments: { name: 'plain:::echo', arguments: { q: 'x' } },
      });
      const plain = await direct.client.callTool({ name: 'plain__echo', arguments: { q: 'x' } });
      expect(hits(harness.upstream, '/echo')).toBe(before + 3);
      const strip = (result: Record<string, unknown>) => {
        const body = structuredClone(result.structuredContent) as {
          meta?: { duration_ms?: number };
          data?: unknown;
        };
        if (body.meta) body.meta.duration_ms = 0;
        return { ...result, structuredContent: body, content: undefined, _meta: undefined };
      };
      expect(strip(viaName)).toEqual(strip(plain));
      expect(strip(viaId)).toEqual(strip(plain));
      expect(viaName.structuredContent).toMatchObject({ ok: true, meta: { tool_id: 'plain:::echo' } });
      // A failure is the same tool error too.
      const bad = await client.callTool({
        name: 'call_tool',
        arguments: { name: 'plain__echo', arguments: { nope: 1 } },
      });
      const badDirect = await direct.client.callTool({ name: 'plain__echo', arguments: { nope: 1 } });
      expect(bad.isError).toBe(true);
      expect(bad.structuredContent).toEqual(badDirect.structuredContent);
    } finally {
      await Promise.all([close(), direct.close()]);
    }
  });

  it('call_tool answers a tool error naming search_tools for an unknown tool, and refuses bad arguments', async () => {
    const { client, close } = await connectV1(harness);
    try {
      const unknown = await client.callTool({
        name: 'call_tool',
        arguments: { name: 'nope__nothing', arguments: {} },
      });
      expect(unknown.isError).toBe(true);
      expect(unknown.structuredContent).toEqual({
        ok: false,
        error: 'tool_not_found',
        message: "No tool is named nope__nothing: find the tool's name with search_tools first.",
        tool_id: 'nope__nothing',
      });
      const malformed = await client.callTool({ name: 'call_tool', arguments: { arguments: {} } });
      expect(malformed.isError).toBe(true);
      expect(malformed.structuredContent).toMatchObject({
        ok: false,
        error: 'invalid_request',
        issues: [{ path: '/name', message: 'Required value is missing.' }],
      });
      // `arguments` is required (§10 marks only apps? and limit? optional; the listed schema says so):
      // a model that misnames it must not have the tool run with no arguments at all.
      const before = hits(harness.upstream, '/echo');
      const misnamed = await client.callTool({
        name: 'call_tool',
        arguments: { name: 'plain__echo', args: { q: 'x' } },
      });
      expect(misnamed.isError).toBe(true);
      expect(misnamed.structuredContent).toEqual({
        ok: false,
        error: 'invalid_request',
        message: 'The arguments of call_tool do not match its input schema.',
        issues: [{ path: '/arguments', message: 'Required value is missing.' }],
      });
      expect(hits(harness.upstream, '/echo')).toBe(before);
      const badSearch = await client.callTool({ name: 'search_tools', arguments: { query: 'x', limit: 50 } });
      expect(badSearch.isError).toBe(true);
      expect(badSearch.structuredContent).toMatchObject({
        error: 'invalid_request',
        issues: [{ path: '/limit' }],
      });
      // An entry of `apps` that no app can have is a mistake, refused as GET /tools?apps= and
      // /mcp?apps= refuse it — not an empty answer that reads as "no tool does this".
      const badApps = await client.callTool({
        name: 'search_tools',
        arguments: { query: 'rotate an encryption key', apps: ['vault', 'not an app'] },
      });
      expect(badApps.isError).toBe(true);
      expect(badApps.structuredContent).toEqual({
        ok: false,
        error: 'invalid_request',
        message: 'The arguments of search_tools do not match its input schema.',
        issues: [{ path: '/apps/1', message: 'Must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$.' }],
      });
    } finally {
      await close();
    }
  });

  it('refuses an unknown mode with 400 invalid_request', async () => {
    const reply = await rawMcp(
      `${harness.server.url}`,
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      agentHeaders(harness.agent),
    ).then(async () =>
      fetch(new URL('/mcp?mode=everything', harness.server.url), {
        method: 'POST',
        headers: {
          ...agentHeaders(harness.agent),
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      }),
    );
    expect(reply.status).toBe(400);
    expect(await reply.json()).toEqual({
      ok: false,
      error: 'invalid_request',
      message: 'mode must be auto, all or search.',
      issues: [{ path: '', message: 'mode must be auto, all or search.' }],
    });
  });

  describe('an oauth2 tool through call_tool', () => {
    it('v2: URL elicitation, consent, and the retry runs the tool once', async () => {
      const userId = 'search-v2-user';
      const before = hits(harness.upstream, '/me');
      const { client, elicited, close } = await connectV2(harness, { userId });
      try {
        const result = await client.callTool({
          name: 'call_tool',
          arguments: { name: 'demo__getMe', arguments: {} },
        });
        expect(result.isError).toBeUndefined();
        expect(result.structuredContent).toMatchObject({ ok: true, meta: { tool_id: 'demo:::getMe' } });
        expect(elicited).toHaveLength(1);
        expect(elicited[0]?.message).toContain('demo');
        expect(hits(harness.upstream, '/me')).toBe(before + 1);
      } finally {
        await close();
      }
    });

    it('v1: -32042 with the URL; after consent the retried call_tool runs once', async () => {
      const userId = 'search-v1-user';
      const { client, close } = await connectV1(harness, { userId });
      const before = hits(harness.upstream, '/me');
      try {
        const error = await client
          .callTool({ name: 'call_tool', arguments: { name: 'demo:::getMe', arguments: {} } })
          .then(
            () => null,
            (e: { code: number; data: { elicitations: Array<{ url: string }> } }) => e,
          );
        expect(error?.code).toBe(-32042);
        expect(hits(harness.upstream, '/me')).toBe(before);
        const done = await consent(harness, error?.data.elicitations[0]?.url as string, userId);
        expect(done.page.html).toContain('<strong>demo</strong> is now connected');
        const result = await client.callTool({
          name: 'call_tool',
          arguments: { name: 'demo:::getMe', arguments: {} },
        });
        expect(result.structuredContent).toMatchObject({ ok: true, meta: { tool_id: 'demo:::getMe' } });
        expect(hits(harness.upstream, '/me')).toBe(before + 1);
      } finally {
        await close();
      }
    });
  });
});
