/**
 * The words tool search treats specially (docs/reference.md "Tool search"): words that carry no
 * meaning in a task, the actions a task asks for and the HTTP methods that perform them, and the
 * short forms and near-synonyms of API vocabulary. Kept as data, in one place, written from the
 * vocabulary of API documents in general — never from single benchmark tasks.
 *
 * Written here rather than taken from a stop-word package: those lists are made for prose and
 * drop words that name operations in an API ("get", "first", "new", "open", "show", "all").
 */

/** Words that say nothing about which operation is meant. Matched before stemming. */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a an the this that these those there here of to for in on at by with from into onto about as via per ' +
    'and or but not no nor so than then also just only very too again ' +
    'is are was were be been being am do does did doing done has have had having ' +
    'i me my mine we us our ours you your yours he him his she her hers it its they them their theirs ' +
    'can could would should will shall may might must need needs want wants wanted like ' +
    'please kindly help let lets let’s thanks thank hey hi ' +
    'some any each every which whose whom what when where why how ' +
    'if else while until up down out over under off ' +
    'it’s i’m i’d don’t isn’t'
  ).split(/\s+/),
);

/** Parts of app ids and provider labels that name no product (`stripe.com`, `googleapis.com`). */
export const APP_NOISE: ReadonlySet<string> = new Set(
  'com io net org co dev app apis api www rest v1 v2 v3 local openapi swagger'.split(' '),
);

/**
 * What a task asks to do, by its verbs (matched before stemming), and the methods that do it.
 * Methods listed second are a weaker match (many APIs create and cancel with POST).
 */
export const ACTION_METHODS: ReadonlyArray<{ words: string[]; methods: string[]; weaker?: string[] }> = [
  {
    words:
      'create creates creating created add adds adding added new make makes making open opens opening post posts send sends sending sent submit submits start starts starting invite invites upload uploads uploading publish generate generates register book schedule launch trigger enqueue insert report file'.split(
        ' ',
      ),
    methods: ['POST'],
    weaker: ['PUT'],
  },
  {
    words:
      'list lists listing show shows showing find finds get gets getting fetch fetches search searches look lookup view see read retrieve display check which who what many count browse download export whats who’s'.split(
        ' ',
      ),
    methods: ['GET'],
    weaker: ['HEAD'],
  },
  {
    words:
      'delete deletes deleting deleted remove removes removing removed destroy drop erase kick unsubscribe trash purge uninstall detach unlink unfollow unstar unassign clear'.split(
        ' ',
      ),
    methods: ['DELETE'],
    weaker: ['POST'],
  },
  {
    words:
      'update updates updating updated change changes changing edit edits editing modify modifies rename renames set sets move moves replace replaces toggle enable disable mark assign reassign patch'.split(
        ' ',
      ),
    methods: ['PATCH', 'PUT'],
    weaker: ['POST'],
  },
  { words: 'cancel cancels revoke revokes void abort stop stops'.split(' '), methods: ['DELETE', 'POST'] },
];

/**
 * Words that mean the same in API vocabulary (short forms, spellings, plain synonyms): a task's
 * word also looks for these, at nearly its own weight. Keys are matched before stemming; a key of
 * two words matches them side by side ("bug report"). Both directions are listed where both hold.
 */
export const SYNONYMS: ReadonlyArray<readonly string[]> = [
  ['repo', 'repository'],
  ['repos', 'repositories'],
  ['pr', 'pull', 'request'],
  ['prs', 'pull', 'requests'],
  ['org', 'organization'],
  ['orgs', 'organizations'],
  ['msg', 'message'],
  ['msgs', 'messages'],
  ['dm', 'direct', 'message'],
  ['dms', 'direct', 'messages'],
  ['env', 'environment'],
  ['envs', 'environments'],
  ['config', 'configuration'],
  ['auth', 'authentication'],
  ['info', 'information'],
  ['app', 'application'],
  ['apps', 'applications'],
  ['db', 'database'],
  ['doc', 'document'],
  ['docs', 'documents'],
  ['pic', 'picture'],
  ['pics', 'pictures'],
  ['photo', 'image'],
  ['photos', 'images'],
  ['bug', 'issue'],
  ['bugs', 'issues'],
  ['bug report', 'issue'],
  ['ticket', 'issue'],
  ['tickets', 'issues'],
  ['email', 'mail'],
  ['e-mail', 'email'],
  ['emails', 'mails'],
  ['dir', 'directory'],
  ['folder', 'directory'],
  ['folders', 'directories'],
  ['erase', 'delete'],
  ['trash', 'delete'],
  ['edit', 'update'],
  ['modify', 'update'],
  ['song', 'track'],
  ['songs', 'tracks'],
  ['bill', 'invoice'],
  ['bills', 'invoices'],
  ['todo', 'task'],
  ['todos', 'tasks'],
  ['teammate', 'member'],
  ['teammates', 'members'],
  ['vm', 'instance'],
  ['vms', 'instances'],
];
