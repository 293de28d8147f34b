/** The search core without a server: text analysis, segments, ranking (docs/reference.md "Tool search"). */
import { describe, expect, it } from 'vitest';
import { MAX_QUERY_TERMS, readQuery, term, terms, tokenize } from '../../server/search/analyze.ts';
import { oneEdit, rank, SharedVocabulary } from '../../server/search/rank.ts';
import { buildSegment, openSegment, type SearchableTool } from '../../server/search/segment.ts';

const tool = (
  name: string,
  method: string,
  path: string,
  summary: string | null,
  description = '',
): SearchableTool => ({
  name,
  method,
  pathTemplate: path,
  summary,
  operationDescription: description || null,
  tags: [],
  parametersSchema: { type: 'object', properties: {} },
});

function index(apps: Record<string, SearchableTool[]>) {
  const vocabulary = new SharedVocabulary();
  const segments = Object.entries(apps).map(([appId, tools]) => {
    const segment = openSegment(appId, buildSegment(tools, { appId, provider: `${appId}.api` }), vocabulary);
    if (!segment) throw new Error('segment did not open');
    vocabulary.count(segment, 1);
    return segment;
  });
  return { vocabulary, segments };
}

describe('text analysis', () => {
  it('splits names at separators and camelCase, keeps other scripts, cuts long tokens', () => {
    expect(tokenize('activity/list-stargazers_for.repo')).toEqual([
      'activity',
      'list',
      'stargazers',
      'for',
      'repo',
    ]);
    expect(tokenize('PostChargesChargeRefund getHTTPResponse')).toEqual([
      'post',
      'charges',
      'charge',
      'refund',
      'get',
      'http',
      'response',
    ]);
    expect(tokenize('créer un problème 作成')).toEqual(['créer', 'un', 'problème', '作成']);
    expect(tokenize('x'.repeat(100))[0]).toHaveLength(40);
  });

  it('meets plural and singular, and verb forms; drops stop words, numbers and lone letters', () => {
    expect(term('issues')).toBe(term('issue'));
    expect(term('creating')).toBe(term('create'));
    expect(term('repositories')).toBe(term('repository'));
    expect(terms("the customer's 20 invoices")).toEqual([term('customer'), term('invoice')]);
  });

  it('reads a task: own words, the words its phrases stand for, its action, and values at low weight', () => {
    const query = readQuery('kick off the deploy workflow in octocat/hello-world');
    expect(query.terms.get(term('workflow') as string)).toBe(1);
    expect(query.terms.get(term('dispatch') as string)).toBeGreaterThan(0);
    // "kick off" is one phrase: "kick" (remove) is not read on its own.
    expect(query.terms.get(term('kick') as string)).toBeLessThan(1);
    expect(query.terms.has(term('remove') as string)).toBe(false);
    expect(query.terms.get('octocat')).toBeLessThan(0.5);
    expect(query.methods).toEqual(new Set(['POST']));
    expect(readQuery('delete the webhook').methods).toEqual(new Set(['DELETE']));
    expect(readQuery('github:::issues_create').exact).toBe('github:::issues_create');
    expect(readQuery('create an issue').exact).toBeNull();
  });

  it('reads a phrasal verb whose particle stands after its object, within a few words of one clause', () => {
    const remove = term('remove') as string;
    const meansRemoval = (text: string) => readQuery(text).terms.has(remove);
    // "take X off" is "take off" (remove); the particle may come after a short object…
    expect(meansRemoval('take Wonderwall off my playlist')).toBe(true);
    expect(meansRemoval('take the old song off')).toBe(true);
    expect(readQuery('take Wonderwall off my playlist').methods).toEqual(new Set(['DELETE']));
    expect(readQuery('tear the staging namespace down').methods).toEqual(new Set(['DELETE']));
    expect(readQuery('turn notifications off').terms.has(term('disable') as string)).toBe(true);
    // …but not from far away, nor from another clause.
    expect(meansRemoval('take the song I played at the party off')).toBe(false);
    expect(meansRemoval('take the photo, then off we go')).toBe(false);
    // A verb that means something alone ("kick": remove) takes a particle apart only at the
    // clause's end: "kick Bob off the team" is no "kick off" (start); "kick the deploy off" is.
    expect(readQuery('kick bob off the team').methods).toEqual(new Set(['DELETE']));
    expect(readQuery('kick the deploy off').methods).toEqual(new Set(['POST']));
    // The particle is the phrase's own word, read at the weight of a phrase's word like "kick off".
    expect(readQuery('kick bob out of the org').terms.get(term('kick') as string)).toBeLessThan(1);
    // "down" alone still means an outage; in "tear … down" it is the verb's particle.
    expect(readQuery('the site is down').terms.has(term('status') as string)).toBe(true);
    expect(readQuery('tear the namespace down').terms.has(term('status') as string)).toBe(false);
  });

  it('reads a task told in the past with the verbs a stemmer cannot bring back', () => {
    const remove = term('remove') as string;
    // "took … off" is "take off"; "left" is "leave" (a member leaving); "paid" is "pay".
    expect(readQuery('I took Wonderwall off my playlist').terms.has(remove)).toBe(true);
    expect(readQuery('dave left the company').terms.has(remove)).toBe(true);
    expect(readQuery('Acme paid the invoice').terms.has(term('payment') as string)).toBe(true);
    // An action in the past still names its method: "made" is "make" (create).
    expect(readQuery('made a calendar for soccer').methods).toEqual(new Set(['POST']));
    // The task's own word stays as written, for documents that say it so ("sent messages").
    expect(readQuery('the emails we sent').terms.get(term('sent') as string)).toBeGreaterThan(0);
  });

  it('takes the first word of action as the action; later ones describe the thing', () => {
    // "open" and "new" are action words (create), here adjectives; "list" is here a noun.
    expect(readQuery('list the open pull requests').methods).toEqual(new Set(['GET']));
    expect(readQuery('create a new list called Backlog').methods).toEqual(new Set(['POST']));
    // A phrase names the action where it stands ("tear down" is delete, before "list").
    expect(readQuery('tear down the namespace and list the pods').methods).toEqual(new Set(['DELETE']));
    // The first clause says what to do; a later one only when the first names no action.
    expect(readQuery('delete the branch, then open a new one').methods).toEqual(new Set(['DELETE']));
    expect(readQuery('my laptop was stolen, so delete its sessions').methods).toEqual(new Set(['DELETE']));
    // Action words that do not act still count as words, at an action word's weight.
    expect(readQuery('list the open pull requests').terms.get(term('open') as string)).toBe(0.6);
  });

  it('looks for the verbs APIs name an action with: insert for create, destroy for delete', () => {
    const query = readQuery('create a calendar');
    // At the weight of the task's action word ("create" itself also stands for create, at 0.7).
    expect(query.terms.get('insert')).toBe(0.6);
    expect(readQuery('deleting the old droplets').terms.get('destroi')).toBe(0.6);
    expect(readQuery('list the droplets').terms.has('destroi')).toBe(false);
  });

  it('tells a task that asks for many things: a plural, all, every, in its first clause', () => {
    const many = (text: string) => readQuery(text).many;
    expect(many('list all my droplets')).toBe(true);
    expect(many('which repos have I starred')).toBe(true);
    expect(many('show every invoice')).toBe(true);
    expect(many('show the droplet')).toBe(false);
    // Singular endings, stop words and verbs ending in -s are no plural.
    expect(many('check the status of this access')).toBe(false);
    expect(many('she creates a page')).toBe(false);
    // A plural in a later clause gives a reason, not the thing asked for.
    expect(many('show the invoice, the numbers look wrong')).toBe(false);
  });

  it('tells a question, which asks about an answer, from a task that acts', () => {
    const question = (text: string) => readQuery(text).question;
    expect(question('is Karen online right now')).toBe(true);
    expect(question('how much storage am I using')).toBe(true);
    expect(question('Karen is online?')).toBe(true);
    // Reading actions are a question's own ("which", "show", "list").
    expect(question('can you show me the unpaid invoices?')).toBe(true);
    // Every action word counts, adjectives too ("open" creates): the rule errs toward acting.
    expect(question('can you show me the open invoices?')).toBe(false);
    // An action that changes something is no question, however it is asked.
    expect(question('can you delete the old branch?')).toBe(false);
    expect(question('could you create a webhook')).toBe(false);
    // An imperative is no question, even one that reads.
    expect(question('list the open invoices')).toBe(false);
    expect(question('set Karen online')).toBe(false);
  });

  it('reads at most a bounded number of words from a huge task', () => {
    const huge = Array.from(
      { length: 5_000 },
      (_, i) => `word${String.fromCharCode(97 + (i % 26))}${i}`,
    ).join(' ');
    expect(readQuery(huge).terms.size).toBe(MAX_QUERY_TERMS);
    expect(readQuery('the of and to a').terms.size).toBe(0);
  });
});

describe('ranking', () => {
  const github = [
    tool(
      'orgs_create-issue-field',
      'POST',
      '/orgs/{org}/issue-fields',
      'Create issue field for an organization',
    ),
    tool('issues_list-for-repo', 'GET', '/repos/{owner}/{repo}/issues', 'List repository issues'),
    tool('issues_create', 'POST', '/repos/{owner}/{repo}/issues', 'Create an issue'),
    tool(
      'activity_list-stargazers-for-repo',
      'GET',
      '/repos/{owner}/{repo}/stargazers',
      'List stargazers',
      'Lists the people that have starred the repository.',
    ),
  ];

  it('ranks the tool whose name the task covers first, and the method the task asks for', () => {
    const { vocabulary, segments } = index({ github });
    const names = (text: string) => rank(vocabulary, segments, readQuery(text), 10).map((hit) => hit.name);
    expect(names('create an issue')[0]).toBe('issues_create');
    expect(names('list the issues')[0]).toBe('issues_list-for-repo');
    expect(names('who starred my repo')[0]).toBe('activity_list-stargazers-for-repo');
    expect(names('zebra')).toEqual([]);
  });

  it('weighs the action a task asks for against each method', () => {
    const { vocabulary, segments } = index({
      shop: [
        tool('widget', 'GET', '/widgets/{id}', 'A widget'),
        tool('widget_2', 'DELETE', '/widgets/{id}', 'A widget'),
        tool('widget_3', 'PATCH', '/widgets/{id}', 'A widget'),
      ],
    });
    const first = (text: string) => rank(vocabulary, segments, readQuery(text), 3)[0]?.name;
    expect(first('remove the widget')).toBe('widget_2');
    expect(first('change the widget')).toBe('widget_3');
    expect(first('show the widget')).toBe('widget');
  });

  it('puts an exact name first with score 1, orders by score, ties in catalog order, and keeps `limit`', () => {
    const same = [tool('alpha', 'GET', '/a', 'Widget report'), tool('beta', 'GET', '/b', 'Widget report')];
    const { vocabulary, segments } = index({ one: same, two: same });
    const hits = rank(vocabulary, segments, readQuery('widget report'), 10);
    expect(hits.map((hit) => `${hit.appId}:${hit.name}`)).toEqual([
      'one:alpha',
      'one:beta',
      'two:alpha',
      'two:beta',
    ]);
    expect(new Set(hits.map((hit) => hit.score)).size).toBe(1);
    expect(rank(vocabulary, segments, readQuery('widget report'), 3)).toEqual(hits.slice(0, 3));
    const exact = rank(vocabulary, segments, readQuery('two:::beta'), 10);
    expect(exact[0]).toMatchObject({ appId: 'two', name: 'beta', score: 1 });
    expect(exact.slice(1).every((hit) => hit.score < 1)).toBe(true);
  });

  it('forgets the words of a segment counted out', () => {
    const { vocabulary, segments } = index({ github });
    const [segment] = segments;
    vocabulary.count(segment as NonNullable<typeof segment>, -1);
    expect(vocabulary.lookup(readQuery('stargazers'))).toEqual([]);
  });

  it('refuses a stored segment of another format', () => {
    const text = buildSegment(github, { appId: 'github', provider: 'github.rest' });
    const stored = JSON.parse(text);
    expect(
      openSegment('github', JSON.stringify({ ...stored, format: stored.format + 1 }), new SharedVocabulary()),
    ).toBeNull();
    expect(openSegment('github', '{not json', new SharedVocabulary())).toBeNull();
    const { collections: _, ...withoutCollections } = stored;
    expect(openSegment('github', JSON.stringify(withoutCollections), new SharedVocabulary())).toBeNull();
  });

  it('ranks the tools of an app the task names above closer look-alikes of other apps', () => {
    const { vocabulary, segments } = index({
      alpha: [tool('send_message', 'POST', '/messages', 'Send a message', 'Sends a message to a channel.')],
      beta: [tool('send_message', 'POST', '/messages', 'Send a message', 'Sends a message to a channel.')],
      gamma: [tool('list_messages', 'GET', '/messages', 'List messages', 'Lists the messages of a channel.')],
    });
    const order = (text: string) => rank(vocabulary, segments, readQuery(text), 3).map((hit) => hit.appId);
    expect(order('send a message to the channel')).toEqual(['alpha', 'beta', 'gamma']);
    expect(order('send a message to the channel with gamma')).toEqual(['gamma', 'alpha', 'beta']);
    // A word that most searched apps' names hold names none of them.
    const messaging = [tool('send_message', 'POST', '/messages', 'Send a message')];
    const shared = index({
      'x-cloud': messaging,
      'y-cloud': messaging,
      'z-cloud': messaging,
      'w-cloud': messaging,
    });
    const hits = rank(shared.vocabulary, shared.segments, readQuery('send a cloud message'), 4);
    expect(new Set(hits.map((hit) => hit.score)).size).toBe(1);
  });

  it('finds a tool by a near spelling of a word no tool holds, never in place of a known word', () => {
    const { vocabulary, segments } = index({
      calendar: [
        tool('colors_get', 'GET', '/colors', 'Get the colors'),
        tool('calendars_get', 'GET', '/calendars/{id}', 'Get a calendar'),
      ],
    });
    const hits = rank(vocabulary, segments, readQuery('get my calnedar'), 2);
    expect(hits.map((hit) => hit.name)).toEqual(['calendars_get', 'colors_get']);
    expect((hits[0]?.score ?? 0) > (hits[1]?.score ?? 0)).toBe(true);
    // "colors" is a word tools hold: it is not read as a misspelling of anything.
    expect(vocabulary.lookup(readQuery('colors')).map(({ weight }) => weight)).toEqual([1]);
  });

  it('finds the tool an API names with its own verb for the action (insert, destroy)', () => {
    const { vocabulary, segments } = index({
      calendar: [
        tool(
          'events_import',
          'POST',
          '/calendars/{id}/events/import',
          'Import an event as a private event copy',
        ),
        tool('events_insert', 'POST', '/calendars/{id}/events', 'An event'),
      ],
      shop: [
        tool('widgets_archive', 'POST', '/widgets/{id}/archive', 'Archive a widget, keeping the widget'),
        tool('widgets_destroy', 'DELETE', '/widgets/{id}', 'A widget'),
      ],
    });
    const first = (text: string, app: number) =>
      rank(vocabulary, [segments[app] as (typeof segments)[number]], readQuery(text), 2)[0]?.name;
    expect(first('create an event', 0)).toBe('events_insert');
    expect(first('delete the widget', 1)).toBe('widgets_destroy');
  });

  it('prefers a collection’s GET for a task that reads many things, not for one thing or a change', () => {
    const droplets = [
      // Alike but for their paths: a member's first in catalog order, so it wins a tie.
      tool('droplets_get', 'GET', '/droplets/{id}', 'A droplet'),
      tool('droplets_list', 'GET', '/droplets', 'A droplet'),
      tool('droplets_destroy', 'DELETE', '/droplets/{id}', 'Delete a droplet'),
    ];
    const { vocabulary, segments } = index({ digitalocean: droplets });
    const names = (text: string) => rank(vocabulary, segments, readQuery(text), 3).map((hit) => hit.name);
    expect(names('show my droplets')[0]).toBe('droplets_list');
    expect(names('show all my droplet')[0]).toBe('droplets_list');
    expect(names('show my droplet')[0]).toBe('droplets_get');
    expect(names('delete my droplets')[0]).toBe('droplets_destroy');
    // Removing many things is no reading: a POST, the weaker match for "remove", stays above the
    // collection's GET that would otherwise take its place.
    const bulk = index({
      bulk: [
        tool('droplets_list', 'GET', '/droplets', 'A droplet'),
        tool('droplets_bulk', 'POST', '/droplets', 'A droplet'),
      ],
    });
    expect(rank(bulk.vocabulary, bulk.segments, readQuery('remove my droplets'), 2)[0]?.name).toBe(
      'droplets_bulk',
    );
    // The segment marks which tools' paths end in a literal: collections.
    expect([...(segments[0]?.collections ?? [])]).toEqual([0, 1, 0]);
  });

  it('knows one edit from two', () => {
    expect(oneEdit('calender', 'calendar')).toBe(true);
    expect(oneEdit('recieve', 'receive')).toBe(true);
    expect(oneEdit('webhok', 'webhook')).toBe(true);
    expect(oneEdit('webhooks', 'webhook')).toBe(true);
    expect(oneEdit('webhook', 'webhook')).toBe(false);
    expect(oneEdit('calendra', 'calendar')).toBe(true);
    expect(oneEdit('calnedra', 'calendar')).toBe(false);
    expect(oneEdit('hook', 'webhook')).toBe(false);
  });

  it('reads what the parameters’ descriptions say, below the tool’s own words', () => {
    const withBody = (
      name: string,
      summary: string,
      property: string,
      description: string,
    ): SearchableTool => ({
      ...tool(name, 'POST', `/${name}`, summary),
      parametersSchema: {
        type: 'object',
        properties: { body: { type: 'object', properties: { [property]: { type: 'string', description } } } },
      },
    });
    const { vocabulary, segments } = index({
      chat: [
        withBody('chat_post', 'Post a message', 'text', 'The text of the message.'),
        withBody('reactions_add', 'Adds a reaction to an item', 'name', 'Reaction (smiley) name.'),
      ],
    });
    expect(rank(vocabulary, segments, readQuery('which smiley'), 2).map((hit) => hit.name)).toEqual([
      'reactions_add',
    ]);
    expect(rank(vocabulary, segments, readQuery('a reaction'), 1)[0]?.score).toBeGreaterThan(
      rank(vocabulary, segments, readQuery('smiley'), 1)[0]?.score ?? 1,
    );
  });

  it('reaches a tool through the fields of what it answers, for a question only', () => {
    const answering = (name: string, method: string, summary: string, answers: string[]): SearchableTool => ({
      ...tool(name, method, `/${name}`, summary),
      answers,
    });
    const { vocabulary, segments } = index({
      chat: [
        answering('users_info', 'GET', 'Gets information about a user', ['ok', 'user']),
        answering('users_getPresence', 'GET', 'Gets user presence information', ['ok', 'presence', 'online']),
        answering('users_setPresence', 'POST', 'Manually sets user presence', ['ok']),
      ],
    });
    const names = (text: string) => rank(vocabulary, segments, readQuery(text), 3).map((hit) => hit.name);
    // No tool's own words say "online": its answer does, and a question asks for it.
    expect(names('is Karen online right now?')).toEqual(['users_getPresence']);
    // An imperative acts: the fields a tool answers say nothing of what it does (a resource's
    // create, update and read tools answer the same object), so they are not read.
    expect(names('set Karen online')).toEqual(['users_setPresence']);
    // The answer's fields are postings of their own: they leave the tools' other words as they were.
    expect(vocabulary.lookup(readQuery('online'))).toEqual([]);
  });

  it('reads the values a tool’s parameters and body allow, but not code lists or HTTP methods', () => {
    const taking = (name: string, summary: string, properties: Record<string, unknown>): SearchableTool => ({
      ...tool(name, 'GET', `/${name}`, summary),
      parametersSchema: {
        type: 'object',
        properties,
        $defs: { filter: { type: 'object', properties: { mood: { enum: ['cheerful', 'gloomy'] } } } },
      },
    });
    const { vocabulary, segments } = index({
      boards: [
        taking('boards_list', 'List boards', { filter: { type: 'string', enum: ['open', 'archived'] } }),
        taking('cards_list', 'List cards', { body: { $ref: '#/$defs/filter' } }),
        taking('labels_list', 'List labels', {
          color: { type: 'array', items: { enum: ['crimson', 'teal'] } },
        }),
        taking('hooks_list', 'List hooks', {
          verb: { enum: ['GET', 'POST', 'DELETE'] },
          country: { enum: Array.from({ length: 21 }, (_, i) => (i === 0 ? 'narnia' : `land${i}`)) },
        }),
      ],
    });
    const first = (text: string) => rank(vocabulary, segments, readQuery(text), 4)[0]?.name;
    expect(first('show the archived ones')).toBe('boards_list');
    expect(first('the gloomy ones')).toBe('cards_list');
    expect(first('anything crimson')).toBe('labels_list');
    // An enum of 21 values is a code list; an enum of methods would read as an action.
    expect(first('anything in narnia')).toBeUndefined();
    const held = (word: string) => vocabulary.df(vocabulary.idOf(term(word) as string));
    expect([held('narnia'), held('post'), held('delete'), held('archived')]).toEqual([0, 0, 0, 1]);
  });
});
