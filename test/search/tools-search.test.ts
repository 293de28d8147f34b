/**
 * GET /tools?q= end to end (docs/reference.md "Tool search"): tasks phrased as people phrase them
 * find the operation, answers are ranked with a score, filters and paging keep the ranking, and no
 * input makes it fail or stall.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Agent, provisionAgent, registerApp } from '../support/agent.ts';
import { describeBackends } from '../support/db.ts';
import { GITHUB_SLICE, STRIPE_SLICE } from '../support/fixtures/openapi/search.ts';
import { call, startServer, type TestServer } from '../support/server.ts';

interface Ranked {
  toolId: string;
  title: string;
  method: string;
  path: string;
  score: number;
}

describeBackends('tool search', (backend) => {
  let server: TestServer;
  let agent: Agent;
  let githubOnly: Agent;

  beforeAll(async () => {
    server = await startServer(backend.name);
    await registerApp(server, 'github', {
      provider: 'github.rest',
      baseUrl: 'https://api.github.example',
      openapi: GITHUB_SLICE,
      auth: { type: 'none' },
    });
    await registerApp(server, 'stripe', {
      provider: 'stripe.payments',
      baseUrl: 'https://api.stripe.example',
      openapi: STRIPE_SLICE,
      auth: { type: 'none' },
    });
    agent = await provisionAgent(server, ['tools:execute']);
    githubOnly = await provisionAgent(server, ['tools:execute:github']);
  });
  afterAll(async () => {
    await server?.close();
  });

  const find = async (query: string, who: Agent = agent) => {
    const reply = await call(server.url, 'GET', `/tools?${query}`, {
      key: who.apiKey,
      clientId: who.clientId,
    });
    expect(reply.status).toBe(200);
    return reply.body as { tools: Ranked[]; next_cursor?: string };
  };
  const ids = (body: { tools: Ranked[] }) => body.tools.map((tool) => tool.toolId);
  const q = (text: string) => `q=${encodeURIComponent(text)}`;

  it('finds the operation a task names in its own words (the contract’s examples)', async () => {
    expect(ids(await find(`appId=github&${q('open a bug report in octocat/hello-world')}`))[0]).toBe(
      'github:::issues_create',
    );
    expect(ids(await find(`appId=stripe&${q("refund a customer's payment")}`))[0]).toBe(
      'stripe:::PostRefunds',
    );
    // Across apps, both apps' tools are ranked together and each task finds its own app.
    expect(ids(await find(q('open a bug report in octocat/hello-world')))[0]).toBe('github:::issues_create');
    expect(ids(await find(q("refund a customer's payment")))[0]).toBe('stripe:::PostRefunds');
    expect(ids(await find(q('who starred my repo')))[0]).toBe('github:::activity_list-stargazers-for-repo');
    expect(ids(await find(q('cancel the subscription of a customer')))[0]).toBe(
      'stripe:::DeleteSubscriptionsSubscriptionExposedId',
    );
  });

  it('answers title, method, path and a score, ordered by score, ties in catalog order', async () => {
    const body = await find(`appId=github&${q('create issue')}`);
    expect(body.tools[0]).toMatchObject({
      toolId: 'github:::issues_create',
      appId: 'github',
      name: 'issues_create',
      title: 'Create an issue',
      method: 'POST',
      path: '/repos/{owner}/{repo}/issues',
    });
    const scores = body.tools.map((tool) => tool.score);
    expect(scores.every((score) => score > 0 && score <= 1)).toBe(true);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    // Tools that tie are in document order: the two Stripe operations a bare "cancel" reaches
    // only through their descriptions tie on nothing else, so check every tie of an answer.
    const all = await find(`appId=github&${q('repository')}&limit=100`);
    const order = new Map(ids(await find('appId=github')).map((id, index) => [id, index]));
    for (let i = 1; i < all.tools.length; i += 1) {
      const [a, b] = [all.tools[i - 1] as Ranked, all.tools[i] as Ranked];
      if (a.score === b.score)
        expect(order.get(a.toolId) as number).toBeLessThan(order.get(b.toolId) as number);
    }
    // Stripe's operations have no summary: the title is the tool's name.
    expect((await find(`appId=stripe&${q('PostRefunds')}`)).tools[0]).toMatchObject({
      title: 'PostRefunds',
      method: 'POST',
      path: '/v1/refunds',
      score: 1,
    });
  });

  it('puts an exact tool name or id first', async () => {
    for (const exact of ['issues_lock', 'ISSUES_LOCK', 'github:::issues_lock']) {
      const body = await find(`${q(exact)}`);
      expect(body.tools[0]).toMatchObject({ toolId: 'github:::issues_lock', score: 1 });
      expect(body.tools.slice(1).every((tool) => tool.score < 1)).toBe(true);
    }
  });

  it('answers 20 tools by default when q is given, and pages the ranking in its order', async () => {
    const first = await find(q('create list get update delete repository issue customer refund'));
    expect(first.tools).toHaveLength(20);
    expect(first.next_cursor).toEqual(expect.any(String));
    const whole = ids(
      await find(`${q('create list get update delete repository issue customer refund')}&limit=100`),
    );
    expect(whole.length).toBeGreaterThan(20);
    const pages: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await find(
        `${q('create list get update delete repository issue customer refund')}&limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      pages.push(...ids(page));
      cursor = page.next_cursor;
      if (cursor === undefined) expect(Object.keys(page)).toEqual(['tools']);
    } while (cursor !== undefined);
    expect(pages).toEqual(whole);
  });

  it('narrows to apps= and to the key’s apps', async () => {
    const stripeOnly = ids(await find(`apps=stripe&${q('create')}`));
    expect(stripeOnly.length).toBeGreaterThan(0);
    expect(stripeOnly.every((id) => id.startsWith('stripe:::'))).toBe(true);
    const both = ids(await find(`apps=stripe,github&${q('create')}&limit=100`));
    expect(new Set(both.map((id) => id.split(':::')[0]))).toEqual(new Set(['github', 'stripe']));
    expect(ids(await find(`apps=nope&${q('create')}`))).toEqual([]);
    // Repeated, as a form or an OpenAPI client's exploded array sends it: every value counts.
    expect(ids(await find(`apps=stripe&apps=github&${q('create')}&limit=100`))).toEqual(both);
    const scoped = ids(await find(`${q('refund a payment')}&limit=100`, githubOnly));
    expect(scoped.every((id) => id.startsWith('github:::'))).toBe(true);
    // appId and apps together: both filters hold.
    expect(ids(await find(`appId=github&apps=stripe&${q('create')}`))).toEqual([]);
  });

  it('answers 200 to any text: long, regex characters, only stop words, other scripts', async () => {
    const long = await find(q('create an issue '.repeat(700)));
    expect(long.tools[0]?.toolId).toBe('github:::issues_create');
    for (const text of [
      '.*[(+?',
      '\\',
      '%',
      'the of and to a',
      '作成 問題',
      'создать задачу',
      '🙂',
      '"',
      "'; drop table apps; --",
    ]) {
      const started = performance.now();
      const body = await find(q(text));
      expect(Array.isArray(body.tools)).toBe(true);
      expect(performance.now() - started).toBeLessThan(2_000);
    }
    expect((await find(q('the of and to a'))).tools).toEqual([]);
  });

  it('answers 200 to a long task in another script, though percent-encoded it is far over 16 KiB', async () => {
    // 10,000 characters of Cyrillic are about 56 KB in the URL; 20,000 of Japanese (q's most) 180 KB.
    const cyrillic = 'создать задачу '.repeat(667).slice(0, 10_000);
    expect((await find(q(cyrillic))).tools).toEqual(expect.any(Array));
    expect((await find(q('作成'.repeat(10_000)))).tools).toEqual([]);
  });

  it('refuses a control character in q, and a cursor of the other kind', async () => {
    const bad = await call(server.url, 'GET', `/tools?q=${encodeURIComponent('a\u0000b')}`, {
      key: agent.apiKey,
      clientId: agent.clientId,
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ ok: false, error: 'invalid_request', issues: [{ path: '/q' }] });
    const catalogCursor = (await find('limit=1')).next_cursor as string;
    const rankedCursor = (await find(`${q('create')}&limit=1`)).next_cursor as string;
    for (const query of [`${q('create')}&cursor=${catalogCursor}`, `cursor=${rankedCursor}`]) {
      const reply = await call(server.url, 'GET', `/tools?${query}`, {
        key: agent.apiKey,
        clientId: agent.clientId,
      });
      expect([reply.status, reply.body]).toEqual([
        400,
        {
          ok: false,
          error: 'invalid_request',
          message: 'The cursor is not one this server gave.',
          issues: [{ path: '/cursor', message: 'Must be the next_cursor of a previous page.' }],
        },
      ]);
    }
  });

  describe('follows the catalog', () => {
    it('finds a new app at once, and forgets a deleted one', async () => {
      const pets = (body: { tools: Ranked[] }) => ids(body).filter((id) => id.startsWith('pets:::'));
      expect(pets(await find(q('list the pets')))).toEqual([]);
      await registerApp(server, 'pets', {
        provider: 'example.pets',
        baseUrl: 'https://pets.example',
        openapi: {
          openapi: '3.0.3',
          info: { title: 'Pets', version: '1' },
          paths: {
            '/pets': {
              get: {
                operationId: 'listPets',
                summary: 'List all pets',
                responses: { '200': { description: 'ok' } },
              },
            },
          },
        },
        auth: { type: 'none' },
      });
      expect(ids(await find(q('list the pets')))[0]).toBe('pets:::listPets');
      await call(server.url, 'DELETE', '/admin/apps/pets', { key: server.adminKey });
      expect(pets(await find(q('list the pets')))).toEqual([]);
    });
  });
});
