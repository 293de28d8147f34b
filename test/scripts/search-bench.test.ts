/**
 * The search benchmark's pure parts (`npm run search-bench`, issue 22): the figures it prints are
 * only as good as these. Hand-made examples, no server, no corpus.
 */
import { describe, expect, it } from 'vitest';
import {
  appIdsOfSets,
  FRESH_APPS,
  NEIGHBOUR_APPS,
  registeredApps,
  TASK_APPS,
} from '../../scripts/search-bench/apps.ts';
import { documentOperations, matchOperations } from '../../scripts/search-bench/catalog.ts';
import { firstRank, score } from '../../scripts/search-bench/metrics.ts';
import {
  contentWords,
  sharedContentWords,
  stem,
  summarizeOverlap,
  taskOverlap,
} from '../../scripts/search-bench/overlap.ts';
import { chooseSets, loadTaskSets } from '../../scripts/search-bench/tasks.ts';

describe('recall@k and MRR', () => {
  it('ranks a task by the first of its right tools, 1-based, null when none was answered', () => {
    const answered = ['gh:::repos_get', 'gh:::issues_list', 'gh:::issues_create', 'gh:::pulls_create'];
    expect(firstRank(answered, ['gh:::issues_create'])).toBe(3);
    expect(firstRank(answered, ['gh:::pulls_create', 'gh:::issues_list'])).toBe(2);
    expect(firstRank(answered, ['gh:::issues_update'])).toBeNull();
    expect(firstRank([], ['gh:::issues_create'])).toBeNull();
  });

  it('scores five tasks answered at ranks 1, 3, 5, 6 and not at all', () => {
    // recall@1 = 1/5; recall@5 = 3/5 (rank 6 is out); MRR = (1 + 1/3 + 1/5 + 1/6 + 0) / 5.
    const scores = score([1, 3, 5, 6, null]);
    expect(scores).toEqual({ tasks: 5, recallAt1: 0.2, recallAt5: 0.6, mrr: expect.any(Number) });
    expect(scores.mrr).toBeCloseTo((1 + 1 / 3 + 1 / 5 + 1 / 6) / 5, 12);
  });

  it('scores an empty set as zeros, not NaN', () => {
    expect(score([])).toEqual({ tasks: 0, recallAt1: 0, recallAt5: 0, mrr: 0 });
  });
});

describe('the wording statistic', () => {
  it('stems plurals and verb forms alike', () => {
    expect(['create', 'creates', 'created', 'creating'].map(stem)).toEqual([
      'creat',
      'creat',
      'creat',
      'creat',
    ]);
    expect(['issue', 'issues'].map(stem)).toEqual(['issu', 'issu']);
    expect(['repository', 'repositories'].map(stem)).toEqual(['repository', 'repository']);
    expect(['box', 'boxes', 'class', 'status'].map(stem)).toEqual(['box', 'box', 'class', 'status']);
  });

  it('keeps content words only, splitting names at case changes and separators', () => {
    expect([...contentWords('Who starred MY repo?')]).toEqual(['starr', 'repo']);
    expect([...contentWords('PostChargesChargeRefund')]).toEqual(['post', 'charg', 'refund']);
    expect([...contentWords('activity_list-stargazers-for-repo')]).toEqual([
      'activity',
      'list',
      'stargazer',
      'repo',
    ]);
    expect([...contentWords('the of and to a')]).toEqual([]);
  });

  it('counts the content words a task shares with a title, each once', () => {
    expect(sharedContentWords('open a bug report in octocat/hello-world', 'Create an issue')).toBe(0);
    expect(sharedContentWords('charge this card $20', 'PostCharges')).toBe(1);
    expect(sharedContentWords('create issues, create them now', 'Create an issue')).toBe(2);
  });

  it('takes the most a task shares with any of its right tools', () => {
    expect(taskOverlap('refund the charge', ['PostRefunds', 'PostChargesChargeRefund'])).toBe(2);
    expect(taskOverlap('give her money back', ['PostRefunds', 'PostChargesChargeRefund'])).toBe(0);
  });

  it('summarizes how many tasks share at most one word, with a histogram', () => {
    expect(summarizeOverlap([0, 1, 1, 2, 5, 0])).toEqual({ tasks: 6, atMostOne: 4, histogram: [2, 2, 1, 1] });
  });
});

describe('pairing tools with operations', () => {
  const document = {
    openapi: '3.0.3',
    paths: {
      '/items': {
        post: { operationId: 'createItem', summary: 'Create an item' },
        get: { operationId: 'listItems', summary: 'List items' },
      },
      '/items/{id}': { $ref: '#/components/pathItems/item' },
      '/broken': { get: { operationId: 'broken' } },
    },
    components: { pathItems: { item: { delete: { description: 'Deletes it for good.' } } } },
  };

  it('walks operations in the server order: paths as written, then get, put, post, delete…', () => {
    expect(documentOperations(document).map((operation) => `${operation.method} ${operation.path}`)).toEqual([
      'GET /items',
      'POST /items',
      'DELETE /items/{id}',
      'GET /broken',
    ]);
  });

  it('pairs each listed tool with its operation, skipped operations left out', () => {
    const byName = matchOperations(
      documentOperations(document),
      [{ method: 'GET', path: '/broken' }],
      [
        { name: 'listItems', description: 'List items' },
        { name: 'createItem', description: 'Create an item' },
        { name: 'delete_items_id', description: 'Deletes it for good.' },
      ],
    );
    expect([...byName].map(([name, operation]) => [name, operation.summary])).toEqual([
      ['listItems', 'List items'],
      ['createItem', 'Create an item'],
      ['delete_items_id', null],
    ]);
  });

  it('accepts a title instead of the description (the ranked contract)', () => {
    const byName = matchOperations(
      documentOperations(document),
      [{ method: 'GET', path: '/broken' }],
      [
        { name: 'listItems', description: 'changed', title: 'List items' },
        { name: 'createItem', description: 'changed', title: ' Create  an\nitem' },
        { name: 'delete_items_id', description: 'changed', title: 'delete_items_id' },
      ],
    );
    expect(byName.size).toBe(3);
  });

  it('refuses when the lists do not pair up, rather than give wrong titles', () => {
    const operations = documentOperations(document);
    expect(() => matchOperations(operations, [], [{ name: 'listItems', description: 'List items' }])).toThrow(
      '4 operations are served but the server lists 1 tools',
    );
    expect(() =>
      matchOperations(
        operations,
        [{ method: 'GET', path: '/broken' }],
        [
          { name: 'createItem', description: 'Create an item' },
          { name: 'listItems', description: 'List items' },
          { name: 'delete_items_id', description: 'Deletes it for good.' },
        ],
      ),
    ).toThrow('tool createItem (number 1) does not describe GET /items');
  });
});

describe('the committed task set', () => {
  it('holds at least 200 well-formed tasks over the bench apps, split about 60/40, no app over a quarter', async () => {
    const sets = (await loadTaskSets(appIdsOfSets())).filter((set) => set.name !== 'fresh');
    const [dev, holdout] = sets.map((set) => set.tasks.length) as [number, number];
    expect(dev + holdout).toBeGreaterThanOrEqual(200);
    expect(holdout / (dev + holdout)).toBeGreaterThan(0.35);
    expect(holdout / (dev + holdout)).toBeLessThan(0.45);
    const perApp = new Map<string, number>();
    for (const task of sets.flatMap((set) => set.tasks))
      perApp.set(task.app, (perApp.get(task.app) ?? 0) + 1);
    expect(Math.max(...perApp.values()) / (dev + holdout)).toBeLessThanOrEqual(0.25);
    expect(perApp.size).toBe(TASK_APPS.length);
  });

  it('refuses a task naming an app the bench does not register', async () => {
    const apps = appIdsOfSets();
    await expect(loadTaskSets({ ...apps, dev: new Set(['github']) })).rejects.toThrow(
      /names the app "stripe", which is not one of the dev set's apps/,
    );
  });

  it('refuses a fresh task about one of the 50 apps, and a dev task about a fresh app', async () => {
    const apps = appIdsOfSets();
    await expect(loadTaskSets({ ...apps, fresh: apps.dev })).rejects.toThrow(
      /not one of the fresh set's apps/,
    );
    await expect(loadTaskSets({ ...apps, dev: apps.fresh })).rejects.toThrow(/not one of the dev set's apps/);
  });

  it('holds a fresh set of 10-12 tasks for each of 8-10 apps that are none of the 50', async () => {
    const fresh = (await loadTaskSets(appIdsOfSets())).find((set) => set.name === 'fresh');
    const perApp = new Map<string, number>();
    for (const task of fresh?.tasks ?? []) perApp.set(task.app, (perApp.get(task.app) ?? 0) + 1);
    expect(perApp.size).toBe(FRESH_APPS.length);
    expect(perApp.size).toBeGreaterThanOrEqual(8);
    expect(perApp.size).toBeLessThanOrEqual(10);
    for (const count of perApp.values()) expect(count >= 10 && count <= 12).toBe(true);
    // None of the 50 by document, not only by id: the same API under another name would not be fresh.
    const usual = new Set([...TASK_APPS, ...NEIGHBOUR_APPS].flatMap((app) => [app.id, app.file]));
    for (const app of FRESH_APPS) expect([usual.has(app.id), usual.has(app.file)]).toEqual([false, false]);
  });
});

describe('which apps a run registers', () => {
  it('registers the 50 for dev and holdout, and the fresh apps beside them only for the fresh set', () => {
    expect(chooseSets('all')).toEqual(['dev', 'holdout']);
    expect(chooseSets('fresh')).toEqual(['fresh']);
    expect(chooseSets('dev')).toEqual(['dev']);
    expect(chooseSets('everything')).toBeNull();
    expect(registeredApps(false)).toEqual([...TASK_APPS, ...NEIGHBOUR_APPS]);
    expect(registeredApps(false)).toHaveLength(50);
    expect(registeredApps(true)).toEqual([...TASK_APPS, ...NEIGHBOUR_APPS, ...FRESH_APPS]);
  });
});
