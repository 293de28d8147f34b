import {
  type IncomingMessage,
  type OutgoingHttpHeader,
  type OutgoingHttpHeaders,
  ServerResponse,
} from 'node:http';
import { HEADER } from '../../shared/headers.ts';

type HeaderList = OutgoingHttpHeaders | OutgoingHttpHeader[];

/**
 * The server's response: every answer carries X-Request-Id, whoever writes it (our routes, tRPC's
 * adapter, the MCP transport, an implicit header of `res.end()`). The id joins the headers given
 * to `writeHead` instead of being set with `setHeader` when the request arrives: a header set
 * beforehand sends every `writeHead` down Node's slow path, which sets each of its headers again
 * one by one (the hot path, issue 14).
 */
export class ToolgateResponse<
  Request extends IncomingMessage = IncomingMessage,
> extends ServerResponse<Request> {
  /** Set by the server when the request arrives. */
  requestId = '';

  override writeHead(statusCode: number, reason?: string | HeaderList, headers?: HeaderList): this {
    const message = typeof reason === 'string' ? reason : undefined;
    const given = typeof reason === 'string' ? headers : reason;
    let all: HeaderList | undefined = given;
    if (given === undefined || Array.isArray(given)) this.setHeader(HEADER.requestId, this.requestId);
    else {
      // Copied into a new object (the caller's stays as it was) by a loop: writeHead + end
      // measured 0.7 µs this way, 1.8 µs with a spread (`{ ...given, … }`), 1.3 µs with setHeader.
      const copy: OutgoingHttpHeaders = { [HEADER.requestId]: this.requestId };
      for (const name in given) if (Object.hasOwn(given, name)) copy[name] = given[name];
      all = copy;
    }
    return message === undefined
      ? super.writeHead(statusCode, all)
      : super.writeHead(statusCode, message, all);
  }
}
