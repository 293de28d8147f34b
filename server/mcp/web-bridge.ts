import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Between Node's request/response and the web Request/Response the MCP SDK's handler speaks: the
 * SDK path of /mcp only (the direct path, direct-call.ts, never builds either).
 */

/** A web Request for `url` with the request's headers, aborted when the client goes away. The body is given parsed, apart. */
export function toWebRequest(req: IncomingMessage, res: ServerResponse, url: URL): Request {
  const abort = new AbortController();
  res.once('close', () => abort.abort());
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers.set(name, value);
  }
  return new Request(url, { method: 'POST', headers, signal: abort.signal });
}

/** Writes a web Response (JSON, or the SSE stream of a legacy exchange) to the Node response. */
export async function writeWebResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  if (!response.body) {
    res.writeHead(response.status, headers);
    res.end();
    return;
  }
  // A JSON answer is one piece: read it whole and write it once (iterating the web stream chunk by
  // chunk cost ~0.1 ms per call in the bench profile). Only an event stream is passed on as it comes.
  if (!headers['content-type']?.startsWith('text/event-stream')) {
    const body = Buffer.from(await response.arrayBuffer());
    headers['content-length'] = String(body.length);
    res.writeHead(response.status, headers);
    res.end(body);
    return;
  }
  res.writeHead(response.status, headers);
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve));
    }
  } catch {
    // The client went away mid-stream: nothing left to answer.
  }
  res.end();
}
