/**
 * Mixed audited writes against servers sharing one database (issue 25: "the audit chain verifies
 * after a day of mixed writes from two servers"), used by test/observe/audit-two-servers.test.ts
 * for seconds and by `npm run soak:audit` (scripts/bench/audit-soak.ts) for as long as asked.
 *
 * Each worker owns what it changes (its client, its redirect URIs, keys and apps), so every write
 * must answer 200 and leave exactly one audit event: the count of events is known. Each write goes
 * to a server picked at random, so the servers append to the one chain at the same time. Workers
 * also ask `GET /admin/audit/verify` now and then, while the others write.
 */

export interface MixTarget {
  url: string;
  adminKey: string;
}

export interface MixResult {
  /** Writes answered 200 (one audit event each). */
  writes: number;
  byAction: Record<string, number>;
  /** Verifications asked for during the writes, and those that did not answer ok. */
  verifications: number;
  /** Anything unexpected: a write not answering 200, a verification not ok (at most 20 kept). */
  failures: string[];
}

export interface MixOptions {
  durationMs: number;
  /** Concurrent workers (default 8). */
  workers?: number;
  /** One verification per this many writes of a worker (default 50; 0: none). */
  verifyEvery?: number;
  /**
   * Each worker goes on past the deadline until it has made this many steps (default 0): a test on
   * a busy machine still sees every kind of write ({@link STEPS_PER_ROUND} covers them all).
   */
  minSteps?: number;
  /** Stops early (the soak's Ctrl-C). */
  signal?: AbortSignal;
  /** Called after every write (progress lines). */
  onWrite?: (result: MixResult) => void;
}

/** A small OpenAPI document: an app registration that compiles in a few milliseconds. */
const OPENAPI = {
  openapi: '3.0.3',
  info: { title: 'Mix', version: '1' },
  servers: [{ url: 'http://127.0.0.1:9' }],
  paths: {
    '/items/{id}': {
      get: {
        operationId: 'getItem',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'An item' } },
      },
    },
  },
};

type Step = 'client' | 'uri+' | 'uri-' | 'key+' | 'key-' | 'app+' | 'app-';
/** The steps in turn, from the worker's second (its first makes its client): every kind early. */
const CYCLE: Step[] = ['client', 'app+', 'uri+', 'key+', 'uri-', 'app+', 'key-', 'app-', 'uri+', 'key+'];

/** Steps after which a worker has made every kind of write. */
export const STEPS_PER_ROUND = CYCLE.length;

export async function mixedAuditedWrites(targets: MixTarget[], options: MixOptions): Promise<MixResult> {
  const result: MixResult = { writes: 0, byAction: {}, verifications: 0, failures: [] };
  const deadline = Date.now() + options.durationMs;
  const verifyEvery = options.verifyEvery ?? 50;
  const fail = (line: string) => {
    if (result.failures.length < 20) result.failures.push(line);
  };
  const minSteps = options.minSteps ?? 0;
  const running = (steps: number) =>
    (Date.now() < deadline || steps < minSteps) && !options.signal?.aborted && result.failures.length === 0;

  const send = async (method: string, path: string, body?: unknown) => {
    const target = targets[Math.floor(Math.random() * targets.length)] as MixTarget;
    const response = await fetch(new URL(path, target.url), {
      method,
      headers: {
        authorization: `Bearer ${target.adminKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, text, target: target.url };
  };

  const worker = async (w: number) => {
    let clientId: string | undefined;
    const uris: string[] = [];
    const keys: string[] = [];
    const apps: string[] = [];
    let n = 0;
    const write = async (action: string, method: string, path: string, body?: unknown) => {
      const reply = await send(method, path, body);
      if (reply.status !== 200) {
        fail(`${action}: ${method} ${path} on ${reply.target} → ${reply.status} ${reply.text.slice(0, 300)}`);
        return undefined;
      }
      result.writes += 1;
      result.byAction[action] = (result.byAction[action] ?? 0) + 1;
      options.onWrite?.(result);
      return JSON.parse(reply.text) as Record<string, unknown>;
    };
    while (running(n)) {
      n += 1;
      const step: Step = clientId === undefined ? 'client' : (CYCLE[n % CYCLE.length] as Step);
      const client = clientId as string;
      if (step === 'client') {
        const made = await write('client.created', 'POST', '/admin/clients', { name: `mix ${w}.${n}` });
        clientId = made?.clientId as string | undefined;
        uris.length = 0;
        keys.length = 0;
      } else if (step === 'uri+' || (step === 'uri-' && uris.length === 0)) {
        const uri = `https://mix.example/${w}/${n}`;
        if (await write('redirect_uri.added', 'POST', `/admin/clients/${client}/redirect-uris`, { uri }))
          uris.push(uri);
      } else if (step === 'uri-') {
        const uri = uris.shift() as string;
        await write(
          'redirect_uri.removed',
          'DELETE',
          `/admin/clients/${client}/redirect-uris?uri=${encodeURIComponent(uri)}`,
        );
      } else if (step === 'key+' || (step === 'key-' && keys.length === 0)) {
        const made = await write('api_key.created', 'POST', `/admin/clients/${client}/api-keys`, {
          scopes: ['tools:execute'],
        });
        if (made) keys.push(made.keyId as string);
      } else if (step === 'key-') {
        await write('api_key.revoked', 'DELETE', `/admin/api-keys/${keys.shift() as string}`);
      } else if (step === 'app+' || (step === 'app-' && apps.length === 0)) {
        const appId = `mix${w}x${n}`;
        const put = { provider: 'mix.example', openapi: OPENAPI, auth: { type: 'none' } };
        if (await write('app.registered', 'PUT', `/admin/apps/${appId}`, put)) apps.push(appId);
      } else {
        await write('app.deleted', 'DELETE', `/admin/apps/${apps.shift() as string}`);
      }
      if (verifyEvery > 0 && n % verifyEvery === 0 && running(n)) {
        result.verifications += 1;
        const reply = await send('GET', '/admin/audit/verify');
        const verdict = reply.status === 200 ? (JSON.parse(reply.text) as { ok: boolean }) : undefined;
        if (!verdict?.ok) fail(`verify during writes on ${reply.target} → ${reply.status} ${reply.text}`);
      }
    }
  };
  await Promise.all(Array.from({ length: options.workers ?? 8 }, (_, w) => worker(w)));
  return result;
}
