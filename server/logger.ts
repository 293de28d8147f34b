import { type DestinationStream, type Logger, pino } from 'pino';
import type { ErrorCode } from '../shared/errors.ts';

/**
 * Secrets never reach a log line: these paths are censored wherever they appear, and request
 * logging records the path without its query (an OAuth callback's query carries code and state).
 */
export const REDACT_PATHS = [
  'authorization',
  '*.authorization',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
  'apiKey',
  '*.apiKey',
  'token',
  '*.token',
  'accessToken',
  '*.accessToken',
  'access_token',
  '*.access_token',
  'refreshToken',
  '*.refreshToken',
  'refresh_token',
  '*.refresh_token',
  'clientSecret',
  '*.clientSecret',
  'client_secret',
  '*.client_secret',
  'code',
  '*.code_verifier',
  'code_verifier',
  'verifier',
  '*.verifier',
  'state',
  'secret',
  '*.secret',
  'value',
  'auth.value',
];

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { service: 'toolgate' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}

/**
 * What the one `request` log line of a request says beyond method, path, status and time. Whoever
 * handles the request fills it in (the answer's contract code, the authenticated key and client,
 * the tool call's target and upstream), so one line tells what happened. Ids only, never a secret.
 */
export interface RequestLogFields {
  /** The contract error code answered, when the answer is an error. */
  error?: ErrorCode;
  keyId?: string | null;
  clientId?: string;
  toolId?: string;
  appId?: string;
  upstreamStatus?: number;
  upstreamMs?: number;
  /** Why the upstream was unreachable (ECONNREFUSED, ENOTFOUND, ETIMEDOUT, CERT_HAS_EXPIRED…). */
  cause?: string;
}

/** Where a response keeps its log fields: a property of our own on it (a WeakMap showed in the bench profile). */
const LOG_FIELDS = Symbol('toolgate.logFields');

/** The log fields of the request this response answers (one object per response, made on first use). */
export function requestLogFields(res: object): RequestLogFields {
  const holder = res as { [LOG_FIELDS]?: RequestLogFields };
  holder[LOG_FIELDS] ??= {};
  return holder[LOG_FIELDS];
}

/**
 * A request's child logger, made on its first use: most requests never log, and a child logger
 * per request showed in the bench profile. A function rather than a getter, so an object holding
 * it stays a plain object (cheap to build, and tRPC's context copies keep it).
 */
export function lazyLogger(logger: Logger, requestId: string): () => Logger {
  let child: Logger | undefined;
  return () => {
    child ??= logger.child({ requestId });
    return child;
  };
}
