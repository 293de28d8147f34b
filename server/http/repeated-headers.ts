/**
 * The contract's request headers each carry one value. Node joins the copies of a repeated
 * `X-Service-…` header with ", " (only a few standard headers keep their first copy), so
 * `X-Service-User-Id: u1` twice read as the user "u1, u1", and two idempotency keys as a third key
 * that deduplicates nothing. A user id may itself hold ", ", so the joined value cannot tell; the
 * raw header lines can. A repeated one is refused as Node refuses a repeated Content-Length: the
 * request is malformed. Each surface that reads them (REST procedures, /trpc, /mcp) asks first,
 * and answers in its own envelope.
 */
import type { IncomingMessage } from 'node:http';
import type { ErrorBody } from '../../shared/errors.ts';
import { HEADER } from '../../shared/headers.ts';
import { requestProblem } from '../errors.ts';

/** The contract's single-valued headers that Node joins when repeated. */
const SINGLE_VALUED = [HEADER.clientId, HEADER.userId, HEADER.appId, HEADER.idempotencyKey];

/** 400 invalid_request for the first of those headers sent more than once, else null. */
export function repeatedHeader(req: IncomingMessage): ErrorBody<'invalid_request'> | null {
  for (const name of SINGLE_VALUED) {
    const value = req.headers[name];
    // Only a joined value holds a comma (or a value that has one of its own): the raw lines are
    // read only then, never on a plain call.
    if (typeof value !== 'string' || !value.includes(',')) continue;
    if (copies(req.rawHeaders, name) > 1)
      return requestProblem(`${shown(name)} was sent more than once; send it once.`);
  }
  return null;
}

/** How many lines of the raw headers (`[name, value, name, value, …]`) carry `name` (lower case). */
function copies(raw: readonly string[], name: string): number {
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]?.toLowerCase() === name) count += 1;
  return count;
}

/** A header as the docs write it: `x-service-user-id` → `X-Service-User-Id`. */
function shown(name: string): string {
  return name.replace(/(^|-)[a-z]/g, (start) => start.toUpperCase());
}
