/**
 * An upstream that answers every request 200 `{"received":true}` and records it exactly as it
 * arrived (raw target, headers, body bytes): the far end of the real-document tests and the corpus.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RecordedRequest } from './upstream.ts';

export interface EchoUpstream {
  url: string;
  requests: RecordedRequest[];
  /** The last request received (throws when there is none). */
  last(): RecordedRequest;
  close(): Promise<void>;
}

export async function startEchoUpstream(): Promise<EchoUpstream> {
  const requests: RecordedRequest[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const bodyBytes = Buffer.concat(chunks);
    const url = req.url ?? '';
    const queryAt = url.indexOf('?');
    requests.push({
      method: req.method ?? '',
      url,
      path: queryAt === -1 ? url : url.slice(0, queryAt),
      query: queryAt === -1 ? '' : url.slice(queryAt + 1),
      headers: req.headers,
      rawHeaders: req.rawHeaders,
      body: bodyBytes.toString('utf8'),
      bodyBytes,
    });
    const payload = '{"received":true}';
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
    res.end(payload);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    last: () => {
      const request = requests.at(-1);
      if (!request) throw new Error('the echo upstream received nothing');
      return request;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
