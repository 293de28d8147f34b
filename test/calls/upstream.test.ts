import type { RequestListener } from 'node:http';
import { describe, expect, it } from 'vitest';
import { toData } from '../../server/calls/upstream.ts';
import { LIMITS } from '../../server/config.ts';
import { excerpt } from '../../server/excerpt.ts';

/** A loopback HTTP server for one test, closed (with its connections) afterwards. */
async function withServer(handler: RequestListener, run: (origin: string) => Promise<void>): Promise<void> {
  const { createServer } = await import('node:http');
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  try {
    await run(`http://127.0.0.1:${port}`);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('excerpt', () => {
  it('keeps a short body whole', () => {
    expect(excerpt(Buffer.from('héllo'))).toBe('héllo');
  });

  it('cuts at 64 KiB and drops a character split by the cut', () => {
    const limit = LIMITS.upstreamBodyExcerptBytes;
    const body = Buffer.concat([Buffer.alloc(limit - 1, 'a'), Buffer.from('€€')]);
    const text = excerpt(body);
    expect(Buffer.byteLength(text)).toBe(limit - 1);
    expect(text).toBe('a'.repeat(limit - 1));
    expect(Buffer.byteLength(excerpt(Buffer.alloc(limit * 2, 'b')))).toBe(limit);
  });
});

describe('toData', () => {
  it('maps JSON, text, other media types and empty bodies', () => {
    expect(toData('application/json; charset=utf-8', Buffer.from('{"a":1}'))).toEqual({ a: 1 });
    expect(toData('application/problem+json', Buffer.from('[1]'))).toEqual([1]);
    expect(toData('text/csv', Buffer.from('a,b'))).toBe('a,b');
    expect(toData('image/png', Buffer.from([1, 2, 3]))).toEqual({
      content_type: 'image/png',
      base64: 'AQID',
    });
    expect(toData(null, Buffer.from([0xff]))).toEqual({
      content_type: 'application/octet-stream',
      base64: '/w==',
    });
    expect(toData('application/json', Buffer.alloc(0))).toBeNull();
  });
});

describe('callUpstream', () => {
  it('sends a User-Agent, maps a slow answer to upstream_timeout and a closed port to upstream_unreachable', async () => {
    const { createServer } = await import('node:http');
    const { callUpstream } = await import('../../server/calls/upstream.ts');
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(String(req.headers['user-agent']));
      if (req.url === '/slow') setTimeout(() => res.end('late'), 500);
      else res.end('{"ok":1}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      const ok = await callUpstream(
        { method: 'GET', url: new URL(`http://127.0.0.1:${port}/x`), headers: {} },
        `http://127.0.0.1:${port}`,
        2_000,
        1024 * 1024,
      );
      expect(ok).toEqual({
        ok: true,
        value: { status: 200, contentType: null, body: Buffer.from('{"ok":1}') },
      });
      expect(seen).toEqual(['toolgate/0.1']);
      const slow = await callUpstream(
        { method: 'GET', url: new URL(`http://127.0.0.1:${port}/slow`), headers: {} },
        `http://127.0.0.1:${port}`,
        100,
        1024 * 1024,
      );
      expect(slow).toEqual({ ok: false, error: { kind: 'upstream_timeout' } });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    const closed = await callUpstream(
      { method: 'GET', url: new URL(`http://127.0.0.1:${port}/x`), headers: {} },
      `http://127.0.0.1:${port}`,
      2_000,
      1024 * 1024,
    );
    expect(closed).toEqual({ ok: false, error: { kind: 'upstream_unreachable', cause: 'ECONNREFUSED' } });
  });
});

describe('callUpstream on a huge error body', () => {
  it('reads only the first 64 KiB and lets the rest go', async () => {
    const { callUpstream } = await import('../../server/calls/upstream.ts');
    let written = 0;
    // An error body that never ends: the call must still finish, with exactly the excerpt.
    await withServer(
      (_req, res) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        const chunk = Buffer.alloc(16 * 1024, 'x');
        const pump = () => {
          while (!res.destroyed && written < 512 * 1024 * 1024) {
            written += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        pump();
      },
      async (origin) => {
        const outcome = await callUpstream(
          { method: 'GET', url: new URL(`${origin}/`), headers: {} },
          `${origin}`,
          10_000,
          1024 * 1024,
        );
        expect(outcome).toEqual({
          ok: false,
          error: { kind: 'upstream_error', status: 500, body: 'x'.repeat(LIMITS.upstreamBodyExcerptBytes) },
        });
        expect(written).toBeLessThan(64 * 1024 * 1024);
      },
    );
  });

  it('times out a body that stops halfway (the time-out covers the whole exchange)', async () => {
    const { callUpstream } = await import('../../server/calls/upstream.ts');
    await withServer(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"partial":');
      },
      async (origin) => {
        const stalled = await callUpstream(
          { method: 'GET', url: new URL(`${origin}/stall`), headers: {} },
          `${origin}`,
          100,
          1024 * 1024,
        );
        expect(stalled).toEqual({ ok: false, error: { kind: 'upstream_timeout' } });
      },
    );
  });
});

describe('callUpstream reading answers', () => {
  it('follows a same-origin redirect whose own body is longer than it reads of one (128 KiB)', async () => {
    const { callUpstream } = await import('../../server/calls/upstream.ts');
    const paths: string[] = [];
    await withServer(
      (req, res) => {
        paths.push(String(req.url));
        if (req.url === '/moved') {
          res.writeHead(302, { location: '/here', 'content-type': 'text/plain' });
          res.end(Buffer.alloc(512 * 1024, 'r'));
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"here":true}');
      },
      async (origin) => {
        const outcome = await callUpstream(
          { method: 'GET', url: new URL(`${origin}/moved`), headers: {} },
          `${origin}`,
          5_000,
          1024 * 1024,
        );
        expect(outcome).toEqual({
          ok: true,
          value: { status: 200, contentType: 'application/json', body: Buffer.from('{"here":true}') },
        });
        expect(paths).toEqual(['/moved', '/here']);
      },
    );
  });

  it('does not follow an empty Location (it would name the same URL again)', async () => {
    const { callUpstream } = await import('../../server/calls/upstream.ts');
    let hits = 0;
    await withServer(
      (_req, res) => {
        hits += 1;
        res.writeHead(302, { location: '', 'content-type': 'text/plain' });
        res.end('nowhere');
      },
      async (origin) => {
        const outcome = await callUpstream(
          { method: 'GET', url: new URL(`${origin}/loop`), headers: {} },
          `${origin}`,
          5_000,
          1024,
        );
        expect(outcome).toEqual({
          ok: false,
          error: { kind: 'upstream_error', status: 302, body: 'nowhere' },
        });
        expect(hits).toBe(1);
      },
    );
  });

  it('refuses a success body whose Content-Length is over the limit before reading it', async () => {
    const { callUpstream } = await import('../../server/calls/upstream.ts');
    await withServer(
      (_req, res) => {
        // Declares 10 MB and sends nothing more: only the declaration can end this call in time.
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(10_000_000) });
        res.flushHeaders();
      },
      async (origin) => {
        const outcome = await callUpstream(
          { method: 'GET', url: new URL(`${origin}/big`), headers: {} },
          `${origin}`,
          5_000,
          1024,
        );
        expect(outcome).toEqual({ ok: false, error: { kind: 'upstream_too_large', limit: 1024 } });
      },
    );
  });

  it('waits past a 1xx informational answer for the final one', async () => {
    const { callUpstream } = await import('../../server/calls/upstream.ts');
    await withServer(
      (_req, res) => {
        res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' });
        res.writeHead(201, { 'content-type': 'text/plain' });
        res.end('made');
      },
      async (origin) => {
        const outcome = await callUpstream(
          { method: 'POST', url: new URL(`${origin}/things`), headers: {}, body: 'x' },
          `${origin}`,
          5_000,
          1024,
        );
        expect(outcome).toEqual({
          ok: true,
          value: { status: 201, contentType: 'text/plain', body: Buffer.from('made') },
        });
      },
    );
  });
});
