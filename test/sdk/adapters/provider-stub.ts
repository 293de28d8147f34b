/**
 * A model provider on loopback for the official `openai` and `@anthropic-ai/sdk` clients (their
 * `baseURL` pointed at it): it records every request body the clients send and answers each with
 * the next scripted reply, so a test sees exactly the tool definitions a provider would receive.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProviderRequest {
  method: string;
  path: string;
  body: Record<string, unknown>;
}

export interface ProviderStub {
  url: string;
  requests: ProviderRequest[];
  /** Queues the JSON bodies of the next answers, in order. */
  reply(...bodies: unknown[]): void;
  close(): Promise<void>;
}

export async function startProviderStub(): Promise<ProviderStub> {
  const requests: ProviderRequest[] = [];
  const replies: unknown[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    requests.push({ method: req.method ?? '', path: req.url ?? '', body: text ? JSON.parse(text) : {} });
    const next = replies.shift();
    const status = next === undefined ? 500 : 200;
    const payload = JSON.stringify(next ?? { error: { type: 'api_error', message: 'no reply scripted' } });
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${requests.length}` });
    res.end(payload);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    reply: (...bodies) => {
      replies.push(...bodies);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
