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
 * The verbs API conventions name an action with where plain English says another: Google's APIs
 * create with `insert` (`calendar.events.insert`, `drive.permissions.insert`), Rails-style APIs
 * delete with `destroy`. A task's verb (any form of it) also looks for these, at its own weight.
 */
export const API_VERBS: ReadonlyArray<readonly [string, string]> = [
  ['create', 'insert'],
  ['delete', 'destroy'],
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

/**
 * English verbs whose past forms no stemmer brings back to the verb ("took" is not "take" to
 * Porter): past tense and participle → the verb, so a phrase or an action written with the verb
 * matches a task told in the past ("he left the company", "took it off the list", "we sent",
 * "Acme paid"). General English, not API vocabulary; forms that are mostly other words ("saw",
 * "rose", "felt", "won", "fell") are left out.
 */
export const IRREGULAR_VERBS: ReadonlyMap<string, string> = new Map(
  (
    'became become began begin begun begin bought buy brought bring built build caught catch chose choose ' +
    'chosen choose came come dealt deal did do done do drew draw drawn draw drove drive driven drive ' +
    'forgot forget forgotten forget forgave forgive forgiven forgive froze freeze frozen freeze gave give ' +
    'given give got get gotten get went go gone go grew grow grown grow had have heard hear hid hide ' +
    'hidden hide held hold kept keep knew know known know laid lay led lead left leave lent lend lost lose ' +
    'made make meant mean met meet paid pay ran run rang ring rung ring rebuilt rebuild redid redo redone redo ' +
    'rewrote rewrite rewritten rewrite said say sent send sold sell shook shake shaken shake shot shoot ' +
    'shown show sang sing sung sing slept sleep spoke speak spoken speak spent spend stood stand stole steal ' +
    'stolen steal struck strike swept sweep swore swear sworn swear taught teach took take taken take ' +
    'told tell thought think threw throw thrown throw understood understand undid undo undone undo ' +
    'woke wake woken wake wore wear worn wear withdrew withdraw withdrawn withdraw wrote write written write'
  )
    .split(' ')
    .flatMap((word, i, all) => (i % 2 === 0 ? [[word, all[i + 1] as string] as const] : [])),
);
