/**
 * What the tool-call core relays from an upstream (docs/reference.md "Agent endpoints", §6): no secret the service injected
 * comes back (in `data`, in `upstream_body`, in a stored idempotency answer), and a success body
 * over MAX_UPSTREAM_BODY_BYTES stops being read (502 upstream_too_large, the upstream cut off).
 * Real server, real upstream on loopback, real OAuth provider for the token case.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { dumpDatabase, PUBLIC_URL } from '../oauth/harness.ts';
import { type Agent, provisionAgent, proxy, registerApp } from '../support/agent.ts';
import { describeBackends } from '../support/db.ts';
import { type OAuthProviderFixture, startOAuthProvider } from '../support/oauth-provider.ts';
import { call, startServer, type TestServer } from '../support/server.ts';

const API_KEY = 'sk_live_relay-secret-0123456789abcdef';
/** Issue 23's case: base64 text, whose `+`, `/` and `=` every percent-encoding escapes. */
const B64_KEY = 'Zm9vYmFy+/SeCrEt+Key/Value==';
/** A key on which query and form rules, and JSON escapes, all differ. */
const ODD_KEY = 'k"e\\y/ é~*!(+)=;';
const LIMIT = 64 * 1024;

/** An upstream that echoes what it received back, in several shapes, and one that never ends. */
interface EchoUpstream {
  url: string;
  openapi: unknown;
  /** Bytes written by /endless so far, and whether its socket was closed by the reader. */
  endless: { written: number; closed: Promise<void> };
  close(): Promise<void>;
}

function operation(operationId: string) {
  return { get: { operationId, responses: { '200': { description: 'ok' } } } };
}

async function startEchoUpstream(): Promise<EchoUpstream> {
  let closed!: () => void;
  const endless = { written: 0, closed: new Promise<void>((resolve) => (closed = resolve)) };
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://upstream');
    const seen = `${req.headers['x-api-key'] ?? ''} ${req.headers.authorization ?? ''} ${url.search}`;
    switch (url.pathname) {
      case '/echo':
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ seen, headers: req.headers, [seen]: 'as a key' }));
      case '/echo-escaped': {
        // The same secret written with JSON escapes: only a parsed-value pass can find it.
        const escaped = [...seen].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(`{"escaped":"${escaped}"}`);
      }
      case '/echo-binary':
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        return res.end(Buffer.concat([Buffer.from([0, 1, 2]), Buffer.from(seen), Buffer.from([255])]));
      case '/echo-error':
        res.writeHead(400, { 'content-type': 'text/plain' });
        return res.end(`rejected: ${seen}`);
      case '/echo-url':
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ url: req.url }));
      case '/echo-url-error':
        res.writeHead(403, { 'content-type': 'text/plain' });
        return res.end(`forbidden: ${req.url}`);
      case '/echo-forms':
      case '/echo-forms-error': {
        // The key as the upstream may write it back: as sent, re-encoded by form rules, and as
        // JSON encoders escape it (plain, `/` escaped, non-ASCII escaped) — in an error's text.
        const key = url.searchParams.get('api_key') ?? '';
        const json = JSON.stringify(key);
        const ascii = json.replace(
          /[\u0080-\uffff]/g,
          (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
        );
        const forms = [
          url.search,
          new URLSearchParams({ api_key: key }).toString(),
          `{"key":${json}}`,
          `{"key":${json.replaceAll('/', '\\/')}}`,
          `{"key":${ascii}}`,
        ];
        res.writeHead(url.pathname === '/echo-forms' ? 200 : 400, { 'content-type': 'text/plain' });
        return res.end(forms.join('\n'));
      }
      case '/echo-error-cut': {
        // The 64 KiB cut goes through the secret: its beginning must not be left at the end.
        res.writeHead(500, { 'content-type': 'text/plain' });
        const pad = 'p'.repeat(64 * 1024 - 10);
        return res.end(`${pad}${seen.trim()}${'q'.repeat(100)}`);
      }
      case '/declared-big':
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(LIMIT * 4) });
        return res.end('x'.repeat(LIMIT * 4));
      case '/endless': {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.on('close', closed);
        const chunk = Buffer.alloc(16 * 1024, 'a');
        const pump = () => {
          while (!res.destroyed && endless.written < 1024 * 1024 * 1024) {
            endless.written += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
        };
        return pump();
      }
      default:
        res.writeHead(404, { 'content-type': 'application/json' });
        return res.end('{}');
    }
  };
  const server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const paths = [
    'echo',
    'echo-escaped',
    'echo-binary',
    'echo-error',
    'echo-url',
    'echo-url-error',
    'echo-forms',
    'echo-forms-error',
    'echo-error-cut',
    'declared-big',
    'endless',
  ];
  return {
    url,
    endless,
    openapi: {
      openapi: '3.1.0',
      info: { title: 'echo', version: '1' },
      servers: [{ url }],
      paths: Object.fromEntries(paths.map((p) => [`/${p}`, operation(p.replace(/-/g, '_'))])),
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describeBackends('relayed upstream bodies', (backend) => {
  let server: TestServer;
  let upstream: EchoUpstream;
  let provider: OAuthProviderFixture;
  let agent: Agent;

  beforeAll(async () => {
    [server, upstream, provider] = await Promise.all([
      startServer(backend.name, {
        env: { MAX_UPSTREAM_BODY_BYTES: String(LIMIT), PUBLIC_URL },
      }),
      startEchoUpstream(),
      startOAuthProvider({ redirectUri: `${PUBLIC_URL}/handleOAuthCallback` }),
    ]);
    await registerApp(server, 'keyed', {
      provider: 'acme.echo',
      openapi: upstream.openapi,
      auth: { type: 'api_key', in: 'header', name: 'X-Api-Key', value: API_KEY },
    });
    await registerApp(server, 'queried', {
      provider: 'acme.echo',
      openapi: upstream.openapi,
      auth: { type: 'api_key', in: 'query', name: 'api_key', value: API_KEY },
    });
    await registerApp(server, 'based', {
      provider: 'acme.echo',
      openapi: upstream.openapi,
      auth: { type: 'api_key', in: 'query', name: 'api_key', value: B64_KEY },
    });
    await registerApp(server, 'odd', {
      provider: 'acme.echo',
      openapi: upstream.openapi,
      auth: { type: 'api_key', in: 'query', name: 'api_key', value: ODD_KEY },
    });
    await registerApp(server, 'oauthed', {
      provider: 'acme.echo',
      openapi: upstream.openapi,
      auth: provider.appAuth(),
    });
    agent = await provisionAgent(server, ['tools:execute', 'oauth:initiate']);
  });

  afterAll(async () => {
    await Promise.all([server?.close(), upstream?.close(), provider?.close()]);
  });

  it('redacts the app API key from JSON data, member names, escaped strings and binary data', async () => {
    const reply = await proxy(server, agent, { toolId: 'keyed:::echo', parameters: {} });
    expect(reply.status).toBe(200);
    expect(reply.text).not.toContain(API_KEY);
    expect(reply.body.data.seen).toBe('[REDACTED]  ');
    expect(reply.body.data.headers['x-api-key']).toBe('[REDACTED]');
    expect(reply.body.data['[REDACTED]  ']).toBe('as a key');

    const escaped = await proxy(server, agent, { toolId: 'keyed:::echo_escaped', parameters: {} });
    expect(escaped.status).toBe(200);
    expect(escaped.body.data).toEqual({ escaped: '[REDACTED]  ' });

    const binary = await proxy(server, agent, { toolId: 'queried:::echo_binary', parameters: {} });
    expect(binary.status).toBe(200);
    expect(binary.body.data).toEqual({
      content_type: 'application/octet-stream',
      base64: Buffer.concat([
        Buffer.from([0, 1, 2]),
        Buffer.from('  ?api_key=[REDACTED]'),
        Buffer.from([255]),
      ]).toString('base64'),
    });
  });

  it('redacts upstream_body of a 502, also where the 64 KiB cut goes through the secret', async () => {
    const reply = await proxy(server, agent, { toolId: 'queried:::echo_error', parameters: {} });
    expect(reply.status).toBe(502);
    expect(reply.body).toEqual({
      ok: false,
      error: 'upstream_error',
      message: 'The upstream answered 400.',
      upstream_status: 400,
      upstream_body: 'rejected:   ?api_key=[REDACTED]',
    });

    const cut = await proxy(server, agent, { toolId: 'keyed:::echo_error_cut', parameters: {} });
    expect(cut.status).toBe(502);
    const body: string = cut.body.upstream_body;
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(64 * 1024);
    expect(body).toBe('p'.repeat(64 * 1024 - 10));
    expect(cut.text).not.toContain(API_KEY.slice(0, 10));
  });

  it('redacts a query API key percent-encoded as it was sent, in data and in upstream_body (issue 23)', async () => {
    const reply = await proxy(server, agent, { toolId: 'based:::echo_url', parameters: {} });
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual({ url: '/echo-url?api_key=[REDACTED]' });

    const failed = await proxy(
      server,
      agent,
      { toolId: 'based:::echo_url_error', parameters: {} },
      { 'x-service-idempotency-key': 'based-1' },
    );
    expect(failed.status).toBe(502);
    expect(failed.body).toEqual({
      ok: false,
      error: 'upstream_error',
      message: 'The upstream answered 403.',
      upstream_status: 403,
      upstream_body: 'forbidden: /echo-url-error?api_key=[REDACTED]',
    });
    // The stored 502 (idempotency) is the redacted one too.
    const stored = await dumpDatabase(server);
    expect(stored).toContain('forbidden: /echo-url-error?api_key=[REDACTED]');
    for (const text of [reply.text, failed.text, stored]) expect(text).not.toContain('SeCrEt');
  });

  it('redacts a key in every form it was written in: query and form encoding, JSON escapes', async () => {
    const expected = [
      '?api_key=[REDACTED]',
      'api_key=[REDACTED]',
      '{"key":"[REDACTED]"}',
      '{"key":"[REDACTED]"}',
      '{"key":"[REDACTED]"}',
    ].join('\n');
    const ok = await proxy(server, agent, { toolId: 'odd:::echo_forms', parameters: {} });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toBe(expected);

    const failed = await proxy(server, agent, { toolId: 'odd:::echo_forms_error', parameters: {} });
    expect(failed.status).toBe(502);
    expect(failed.body).toEqual({
      ok: false,
      error: 'upstream_error',
      message: 'The upstream answered 400.',
      upstream_status: 400,
      upstream_body: expected,
    });
    for (const text of [ok.text, failed.text]) expect(text).not.toContain('(+)');
  });

  it('keeps the user access token and refresh token out of the answer and the stored idempotency answer', async () => {
    await call(server.url, 'POST', `/admin/clients/${agent.clientId}/redirect-uris`, {
      key: server.adminKey,
      body: { uri: 'https://agent.example/done' },
    });
    const again = await call(server.url, 'POST', '/initiateOAuth', {
      key: agent.apiKey,
      clientId: agent.clientId,
      body: { appId: 'oauthed', userId: 'u1', clientRedirectUri: 'https://agent.example/done' },
    });
    expect(again.status).toBe(200);
    const back = await provider.authorize(again.body.authorizationUrl, { account: 'u1' });
    const callback = await fetch(`${server.url}/handleOAuthCallback${back.search}`, { redirect: 'manual' });
    expect(callback.status).toBe(302);

    const headers = { 'x-service-user-id': 'u1', 'x-service-idempotency-key': 'relay-1' };
    const first = await proxy(server, agent, { toolId: 'oauthed:::echo', parameters: {} }, headers);
    expect(first.status).toBe(200);
    expect(first.body.data.headers.authorization).toBe('Bearer [REDACTED]');
    const replay = await proxy(server, agent, { toolId: 'oauthed:::echo', parameters: {} }, headers);
    expect(replay.headers.get('x-service-idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(first.text);

    const stored = await dumpDatabase(server);
    for (const secret of provider.secrets()) {
      expect(first.text).not.toContain(secret);
      expect(stored).not.toContain(secret);
    }
    expect(stored).not.toContain(API_KEY);
  });

  it('answers 502 upstream_too_large for a success body over the limit and stops reading an endless one', async () => {
    const declared = await proxy(server, agent, { toolId: 'keyed:::declared_big', parameters: {} });
    expect(declared.status).toBe(502);
    expect(declared.body).toEqual({
      ok: false,
      error: 'upstream_too_large',
      message: `The upstream answered more than ${LIMIT} bytes.`,
      limit: LIMIT,
    });

    const before = process.memoryUsage().rss;
    const endless = await proxy(server, agent, { toolId: 'keyed:::endless', parameters: {} });
    expect(endless.status).toBe(502);
    expect(endless.body).toEqual(declared.body);
    // The server cut the connection: the upstream sees it close and stops writing.
    await upstream.endless.closed;
    expect(upstream.endless.written).toBeLessThan(16 * 1024 * 1024);
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024);
  });
});
