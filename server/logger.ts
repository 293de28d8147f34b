import { type DestinationStream, type Logger, pino } from 'pino';

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
