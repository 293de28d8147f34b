/**
 * `npm run admin -- <command>`: the administration API (docs/reference.md "Administration") from a terminal.
 * Talks REST to a running server through the SDK's `ToolgateAdmin`; `--json` prints the raw answer.
 * Exit status: 0 done, 1 the server (or the network) refused, 2 a usage mistake.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { extname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import {
  type AppRegistration,
  type AppView,
  type AuthTimeout,
  type Failure,
  failureMessage,
  ToolgateAdmin,
} from '../sdk/src/index.ts';

/** Up to this many tools (or skipped operations) are listed one a line; more are counted (--verbose lists them). */
const LISTED = 20;
/** A document larger than this gets a line saying it is on its way, since the server takes seconds. */
const ANNOUNCED_BYTES = 1024 * 1024;

const USAGE = `Usage: npm run admin -- <command> [options]

Clients and their redirect URIs
  clients create <name>                  create an API client
  clients list                           list the clients
  redirect-uris add <clientId> <uri>     register an OAuth redirect URI (exact string)
  redirect-uris list <clientId>          list a client's redirect URIs
  redirect-uris remove <clientId> <uri>  remove one

API keys
  keys create <clientId> --scopes a,b [--name <name>]
                                         issue a key (shown this once); scopes: tools:execute,
                                         tools:execute:<appId>, oauth:initiate, connections:read,
                                         connections:write, admin
  keys list <clientId>                   list a client's keys (never the keys themselves)
  keys revoke <keyId>                    revoke a key

Apps
  apps put <appId> --openapi <file.json|file.yaml> --provider <vendor.product>
           [--base-url <url>] [--auth-json '<json>' | --auth-file <file.json>] [--verbose]
                                         register or replace an app (auth defaults to {"type":"none"});
                                         more than ${LISTED} tools are counted, --verbose lists them
  apps list                              list the apps
  apps get <appId> [--verbose]           show one app (secrets are never shown)
  apps delete <appId>                    delete an app and its users' grants

Options
  --url <url>          the server (env TOOLGATE_URL, default http://127.0.0.1:3000)
  --admin-key <key>    a key with the admin scope (env TOOLGATE_ADMIN_KEY)
  --json               print the server's JSON answer instead of text
  -h, --help           this help

Exit status: 0 done, 1 refused by the server (its message is printed), 2 usage mistake.
For machine-readable output use npm's -s, which keeps its own lines out: npm run -s admin -- apps list --json`;

const OPTIONS = {
  url: { type: 'string' },
  'admin-key': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  scopes: { type: 'string' },
  name: { type: 'string' },
  openapi: { type: 'string' },
  provider: { type: 'string' },
  'base-url': { type: 'string' },
  'auth-json': { type: 'string' },
  'auth-file': { type: 'string' },
  verbose: { type: 'boolean' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

/** A mistake in the command line: printed with a pointer to --help, exit status 2. */
class UsageError extends Error {
  override name = 'UsageError';
}

interface Output {
  json: unknown;
  text: string;
}

/** Where the CLI writes: the process's streams, or (tests running it in-process) buffers. */
export interface Streams {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

interface Command {
  /** The positional arguments after the command words. */
  args: string[];
  /** Options this command accepts besides the global ones. */
  options?: (keyof typeof OPTIONS)[];
  run(admin: ToolgateAdmin, args: string[], values: Values, streams: Streams): Promise<Failure | Output>;
}

const GLOBAL_OPTIONS = new Set(['url', 'admin-key', 'json', 'help']);

const COMMANDS: Record<string, Command> = {
  'clients create': {
    args: ['name'],
    run: async (admin, [name]) => {
      const r = await admin.createClient(name as string);
      if (!r.ok) return r;
      return out(
        { clientId: r.clientId, name: r.name, createdAt: r.createdAt },
        `Created client ${r.clientId} "${r.name}" at ${r.createdAt}.`,
      );
    },
  },
  'clients list': {
    args: [],
    run: async (admin) => {
      const r = await admin.listClients();
      if (!r.ok) return r;
      return out(
        { clients: r.clients },
        r.clients.length === 0
          ? 'No clients yet.'
          : table(
              ['CLIENT ID', 'NAME', 'CREATED'],
              r.clients.map((c) => [c.clientId, c.name, c.createdAt]),
            ),
      );
    },
  },
  'redirect-uris add': {
    args: ['clientId', 'uri'],
    run: async (admin, [clientId, uri]) => {
      const r = await admin.addRedirectUri(clientId as string, uri as string);
      if (!r.ok) return r;
      return out({ clientId: r.clientId, uri: r.uri }, `Registered ${r.uri} on ${r.clientId}.`);
    },
  },
  'redirect-uris list': {
    args: ['clientId'],
    run: async (admin, [clientId]) => {
      const r = await admin.listRedirectUris(clientId as string);
      if (!r.ok) return r;
      return out({ uris: r.uris }, r.uris.length === 0 ? 'No redirect URIs.' : r.uris.join('\n'));
    },
  },
  'redirect-uris remove': {
    args: ['clientId', 'uri'],
    run: async (admin, [clientId, uri]) => {
      const r = await admin.removeRedirectUri(clientId as string, uri as string);
      if (!r.ok) return r;
      return out({ ok: true }, `Removed ${uri} from ${clientId}.`);
    },
  },
  'keys create': {
    args: ['clientId'],
    options: ['scopes', 'name'],
    run: async (admin, [clientId], values) => {
      if (!values.scopes)
        throw new UsageError('keys create needs --scopes a,b (e.g. --scopes tools:execute)');
      const scopes = values.scopes
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
      const r = await admin.createApiKey(clientId as string, {
        scopes,
        ...(values.name !== undefined ? { name: values.name } : {}),
      });
      if (!r.ok) return r;
      return out(
        { keyId: r.keyId, apiKey: r.apiKey, scopes: r.scopes },
        [
          `Issued API key ${r.keyId} to ${clientId} (scopes: ${r.scopes.join(', ')}).`,
          '',
          `  ${r.apiKey}`,
          '',
          'Store it now: the server keeps only a hash and will not show it again.',
        ].join('\n'),
      );
    },
  },
  'keys list': {
    args: ['clientId'],
    run: async (admin, [clientId]) => {
      const r = await admin.listApiKeys(clientId as string);
      if (!r.ok) return r;
      return out(
        { keys: r.keys },
        r.keys.length === 0
          ? `No API keys on ${clientId}.`
          : table(
              ['KEY ID', 'NAME', 'SCOPES', 'CREATED', 'LAST USED', 'REVOKED'],
              r.keys.map((k) => [
                k.keyId,
                k.name ?? '-',
                k.scopes.join(','),
                k.createdAt,
                k.lastUsedAt ?? '-',
                k.revokedAt ?? '-',
              ]),
            ),
      );
    },
  },
  'keys revoke': {
    args: ['keyId'],
    run: async (admin, [keyId]) => {
      const r = await admin.revokeApiKey(keyId as string);
      if (!r.ok) return r;
      return out({ ok: true }, `Revoked ${keyId}; every server refuses it within 5 s.`);
    },
  },
  'apps put': {
    args: ['appId'],
    options: ['openapi', 'provider', 'base-url', 'auth-json', 'auth-file', 'verbose'],
    run: async (admin, [appId], values, streams) => {
      const r = await admin.putApp(appId as string, registration(values, streams));
      if (!r.ok) return r;
      // Long lists are counted unless --verbose: GitHub's document is 1,223 tools.
      const listTools = values.verbose === true || r.tools.length <= LISTED;
      const listSkipped = values.verbose === true || r.skipped.length <= LISTED;
      const more = ' (--verbose lists them)';
      const lines = [
        `Registered app ${r.appId}: ${count(r.tools.length, 'tool')}${listTools ? '' : more}, ` +
          `${r.skipped.length.toLocaleString('en-US')} skipped${listSkipped ? '' : more}.`,
      ];
      if (listTools) lines.push(...r.tools.map((t) => `  ${r.appId}:::${t}`));
      // What the document has that is not a tool, so nothing goes missing silently.
      if (listSkipped && r.skipped.length > 0) {
        lines.push(
          'Skipped:',
          ...r.skipped.map(
            (s) => `  ${s.method} ${s.path}${s.operationId ? ` (${s.operationId})` : ''}: ${s.reason}`,
          ),
        );
      }
      return out({ appId: r.appId, tools: r.tools, skipped: r.skipped }, lines.join('\n'));
    },
  },
  'apps list': {
    args: [],
    run: async (admin) => {
      const r = await admin.listApps();
      if (!r.ok) return r;
      return out(
        { apps: r.apps },
        r.apps.length === 0
          ? 'No apps yet.'
          : table(
              ['APP ID', 'PROVIDER', 'AUTH', 'TOOLS', 'BASE URL'],
              r.apps.map((a) => [a.appId, a.provider, a.auth.type, String(a.tools.length), a.baseUrl]),
            ),
      );
    },
  },
  'apps get': {
    args: ['appId'],
    options: ['verbose'],
    run: async (admin, [appId], values) => {
      const r = await admin.getApp(appId as string);
      if (!r.ok) return r;
      return out(r.app, describeApp(r.app, values.verbose === true));
    },
  },
  'apps delete': {
    args: ['appId'],
    run: async (admin, [appId]) => {
      const r = await admin.deleteApp(appId as string);
      if (!r.ok) return r;
      return out({ ok: true }, `Deleted app ${appId} and its users' grants.`);
    },
  },
};

function out(json: unknown, text: string): Output {
  return { json, text };
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** `1,223 tools`, `1 tool`. */
function count(n: number, noun: string): string {
  return `${n.toLocaleString('en-US')} ${noun}${n === 1 ? '' : 's'}`;
}

function describeApp(app: AppView, verbose: boolean): string {
  const lines = [
    `App ${app.appId}`,
    `  provider:  ${app.provider}`,
    `  base URL:  ${app.baseUrl}`,
    `  auth:      ${app.auth.type}`,
  ];
  if (app.auth.type === 'api_key')
    lines.push(`  key in:    ${app.auth.in} "${app.auth.name}" (value hidden)`);
  if (app.auth.type === 'oauth2') {
    lines.push(
      `  authorize: ${app.auth.authorizationUrl}`,
      `  token:     ${app.auth.tokenUrl}`,
      ...(app.auth.revocationUrl ? [`  revoke:    ${app.auth.revocationUrl}`] : []),
      `  client id: ${app.auth.clientId} (secret hidden)`,
      `  scopes:    ${app.auth.scopes.join(' ') || '(none)'}`,
    );
  }
  if (!verbose && app.tools.length > LISTED) {
    lines.push(
      `  updated:   ${app.updatedAt}`,
      `  tools:     ${count(app.tools.length, 'tool')} (--verbose lists them)`,
    );
    return lines.join('\n');
  }
  lines.push(`  updated:   ${app.updatedAt}`, `  tools (${app.tools.length}):`);
  for (const tool of app.tools) lines.push(`    ${app.appId}:::${tool}`);
  return lines.join('\n');
}

/** The app registration from --openapi, --provider, --base-url and --auth-json / --auth-file. */
function registration(values: Values, streams: Streams): AppRegistration {
  if (!values.openapi) throw new UsageError('apps put needs --openapi <file.json|file.yaml>');
  if (!values.provider) throw new UsageError('apps put needs --provider <vendor.product>, e.g. github.rest');
  if (values['auth-json'] !== undefined && values['auth-file'] !== undefined) {
    throw new UsageError('give --auth-json or --auth-file, not both');
  }
  const text = readText(values.openapi, '--openapi');
  const bytes = Buffer.byteLength(text);
  if (bytes > ANNOUNCED_BYTES) {
    // stderr: stdout stays the answer (--json); the server takes seconds over a large document.
    streams.stderr.write(
      `Sending ${values.openapi} (${(bytes / 1024 / 1024).toFixed(1)} MB); the server reads it and compiles its tools, which takes a few seconds…\n`,
    );
  }
  // JSON is sent as the object it is; YAML as text, which the server parses (and reports on).
  const openapi =
    extname(values.openapi).toLowerCase() === '.json' ? parseJson(text, `--openapi ${values.openapi}`) : text;
  const authText =
    values['auth-file'] !== undefined ? readText(values['auth-file'], '--auth-file') : values['auth-json'];
  const auth = authText === undefined ? { type: 'none' } : parseJson(authText, 'the auth registration');
  return {
    provider: values.provider,
    openapi: openapi as AppRegistration['openapi'],
    auth: auth as AppRegistration['auth'],
    ...(values['base-url'] !== undefined ? { baseUrl: values['base-url'] } : {}),
  };
}

function readText(file: string, option: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(
      `${option}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      {
        cause: error,
      },
    );
  }
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${what} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
}

function printFailure(failure: Failure | AuthTimeout, url: string, asJson: boolean, streams: Streams): void {
  if (asJson && 'body' in failure) {
    streams.stdout.write(`${JSON.stringify(failure.body, null, 2)}\n`);
  }
  const where = failure.error === 'network_error' ? ` (${url})` : '';
  const status = 'status' in failure ? ` ${failure.status}` : '';
  // Issues get a line each below the message (failureMessage would put them on its line).
  const issues = 'body' in failure && 'issues' in failure.body;
  const message = issues ? failure.body.message : failureMessage(failure);
  streams.stderr.write(`toolgate admin: ${failure.error}${status}: ${message}${where}\n`);
  if ('body' in failure && 'issues' in failure.body) {
    for (const issue of failure.body.issues) {
      streams.stderr.write(`  ${issue.path === '' ? '(body)' : issue.path}: ${issue.message}\n`);
    }
  }
  if ('body' in failure && failure.error === 'rbac_denied') {
    streams.stderr.write(`  the key needs the scope ${failure.body.scope}\n`);
  }
}

/** Node's parser errors, said in this tool's words, with the likely option when one is mistyped. */
function parseProblem(error: unknown): string {
  const { code, message } = error as { code?: string; message: string };
  const unknown = /^Unknown option '(-{1,2}[^']*)'/.exec(message)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && unknown) {
    const guess = closest(unknown.replace(/^-+/, ''), Object.keys(OPTIONS));
    return `unknown option ${unknown}${guess ? `; did you mean --${guess}?` : ''}`;
  }
  const needsValue = /^Option '(-\S+)(?:, (-\S+))? <value>' argument missing/.exec(message);
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && needsValue) {
    return `option ${needsValue[2] ?? needsValue[1]} needs a value`;
  }
  return message;
}

/**
 * An unknown command, said with the likely one, as for options: word by word (the noun, then its
 * verb), so a typo in one word is not hidden by the other; else the commands of the noun.
 */
function unknownCommand(positionals: string[]): string {
  const [noun = '', verb] = positionals;
  const given = positionals.slice(0, 2).join(' ');
  const names = Object.keys(COMMANDS);
  const nouns = [...new Set(names.map((name) => name.split(' ')[0] as string))];
  const knownNoun = nouns.includes(noun) ? noun : closest(noun, nouns);
  if (!knownNoun) return `unknown command "${given}"`;
  const verbs = names
    .filter((name) => name.startsWith(`${knownNoun} `))
    .map((name) => name.split(' ')[1] as string);
  const knownVerb = verb === undefined ? undefined : verbs.includes(verb) ? verb : closest(verb, verbs);
  if (knownVerb) return `unknown command "${given}"; did you mean "${knownNoun} ${knownVerb}"?`;
  const list = verbs.map((v) => `${knownNoun} ${v}`).join(', ');
  return verb === undefined && knownNoun === noun
    ? `${noun} needs a command: ${list}`
    : `unknown command "${given}"; the ${knownNoun} commands are ${list}`;
}

/** The known name nearest to `name` by edit distance, if it is near enough to be a typo. */
export function closest(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(name.length / 3)) + 1;
  for (const candidate of known) {
    const d = levenshtein(name, candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best;
}

function levenshtein(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min(
        (previous[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (previous[j - 1] as number) + cost,
      );
    }
    previous = row;
  }
  return previous[b.length] as number;
}

export async function main(
  argv: string[],
  env: NodeJS.ProcessEnv,
  streams: Streams = process,
): Promise<number> {
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    streams.stderr.write(`toolgate admin: ${parseProblem(error)}\nRun with --help for the commands.\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help || positionals.length === 0) {
    streams.stdout.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  const name = positionals.slice(0, 2).join(' ');
  const command = COMMANDS[name];
  try {
    if (!command) throw new UsageError(unknownCommand(positionals));
    const args = positionals.slice(2);
    if (args.length !== command.args.length) {
      throw new UsageError(
        `${name} takes ${command.args.map((a) => `<${a}>`).join(' ') || 'no arguments'}, got ${args.length === 0 ? 'none' : args.map((a) => JSON.stringify(a)).join(' ')}`,
      );
    }
    for (const option of Object.keys(values)) {
      if (!GLOBAL_OPTIONS.has(option) && !command.options?.includes(option as keyof typeof OPTIONS)) {
        throw new UsageError(`${name} does not take --${option}`);
      }
    }
    const url = values.url ?? env.TOOLGATE_URL ?? 'http://127.0.0.1:3000';
    const adminKey = values['admin-key'] ?? env.TOOLGATE_ADMIN_KEY;
    if (!adminKey) throw new UsageError('no admin key: set TOOLGATE_ADMIN_KEY or pass --admin-key');
    let admin: ToolgateAdmin;
    try {
      admin = new ToolgateAdmin({ baseUrl: url, adminKey });
    } catch (error) {
      throw new UsageError(`--url: ${(error as Error).message.replace('options.baseUrl', url)}`, {
        cause: error,
      });
    }
    const result = await command.run(admin, args, values, streams);
    if ('ok' in result) {
      printFailure(result, url, values.json === true, streams);
      return 1;
    }
    streams.stdout.write(`${values.json ? JSON.stringify(result.json, null, 2) : result.text}\n`);
    return 0;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    streams.stderr.write(`toolgate admin: ${error.message}\nRun with --help for the commands.\n`);
    return 2;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  main(process.argv.slice(2), process.env).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(
        `toolgate admin: unexpected failure: ${(error as Error)?.stack ?? String(error)}\n`,
      );
      process.exitCode = 1;
    },
  );
}
