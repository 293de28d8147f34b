/**
 * Stateless MCP across a cluster (docs/reference.md "MCP"): the input-required answer comes from one server,
 * the retry reaches another on the same PostgreSQL; the shared requestState key verifies it there,
 * the grant is found there, and a duplicate retry on the first server does not run the tool again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../oauth/harness.ts';
import { agentHeaders } from '../support/agent.ts';
import { backends } from '../support/db.ts';
import { hits } from '../support/upstream.ts';
import { consent, MODERN_HEADERS, modernCall, rawMcp } from './world.ts';

describe.runIf(backends().some((b) => b.name === 'postgres'))(
  'MCP across two servers on one PostgreSQL',
  () => {
    let a: Harness;
    let b: Harness;
    beforeAll(async () => {
      a = await startHarness('postgres');
      b = await startHarness('postgres', { share: a });
    });
    afterAll(async () => {
      await b?.close();
      await a?.close();
    });

    it('serves the retry of an authorization round on the other server, and runs the tool once', async () => {
      const userId = 'cluster-user';
      const headers = { ...agentHeaders(a.agent, userId), ...MODERN_HEADERS, 'mcp-name': 'demo__getMe' };
      const first = await rawMcp(a.server.url, modernCall(1, 'demo__getMe', {}), headers);
      const result = (first.json as { result: Record<string, unknown> }).result;
      expect(result.resultType).toBe('input_required');
      const state = result.requestState as string;
      const url = (result.inputRequests as { authorize: { params: { url: string } } }).authorize.params.url;
      expect((await consent(a, url, userId)).page.html).toContain('is now connected');

      const before = hits(a.upstream, '/me');
      const retry = (server: Harness, id: number) =>
        rawMcp(
          server.server.url,
          modernCall(
            id,
            'demo__getMe',
            {},
            { requestState: state, inputResponses: { authorize: { action: 'accept' } } },
          ),
          headers,
        );
      const onB = await retry(b, 2);
      const answered = (
        onB.json as { result: { structuredContent: { ok: boolean; meta: { tool_id: string } } } }
      ).result;
      expect(answered.structuredContent).toMatchObject({ ok: true, meta: { tool_id: 'demo:::getMe' } });
      expect(hits(a.upstream, '/me')).toBe(before + 1);

      const onA = await retry(a, 3);
      expect((onA.json as { result: { structuredContent: unknown } }).result.structuredContent).toEqual(
        answered.structuredContent,
      );
      expect(hits(a.upstream, '/me')).toBe(before + 1);
    });
  },
);
