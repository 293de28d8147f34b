import type { ServerResponse } from 'node:http';
import { type ErrorBody, statusOf } from '../../shared/errors.ts';
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
