import type { ServerResponse } from 'node:http';
import { apiError, type ErrorBody, statusOf } from '../../shared/errors.ts';
import { requestLogFields } from '../logger.ts';

/** Writes a JSON answer with its length. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(payload),
  });
  res.end(payload);
}

/** Writes a contract error body with the status of its code. */
export function sendError(res: ServerResponse, body: ErrorBody, headers: Record<string, string> = {}): void {
  requestLogFields(res).error = body.error;
  sendJson(res, statusOf(body.error), body, headers);
}

/** The contract's 405 with the methods the path does answer (the route table's, and /mcp's own). */
export function sendMethodNotAllowed(res: ServerResponse, method: string, allow: readonly string[]): void {
  sendError(res, apiError('method_not_allowed', `${method} is not allowed on this path.`), {
    allow: allow.join(', '),
  });
}
