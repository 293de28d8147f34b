import { apiError, type ErrorBody } from '../../shared/errors.ts';
import type { AppDeps } from '../context.ts';
import { type Credentials, serviceCredentials } from './credentials.ts';
import { type ExecuteOutcome, type ResolvedTool, runTool } from './execute.ts';
import { userCredentials } from './user-grant.ts';

const USER_ID = /^[\s\S]{1,256}$/;
const HEADER_NAME = 'X-Service-User-Id';

export interface CallIdentity {
  clientId: string;
  /** X-Service-User-Id as sent (undefined when absent). */
  userId: string | undefined;
}

function badHeader(message: string): ErrorBody {
  return apiError('invalid_request', message, { issues: [{ path: '', message }] });
}

/** X-Service-User-Id: absent is fine unless the tool needs a user; present must be 1–256 chars. */
export function checkUserHeader(userId: string | undefined, required: boolean): ErrorBody | null {
  if (userId === undefined) {
    return required ? badHeader(`${HEADER_NAME} is required: this tool acts for an end user.`) : null;
  }
  return USER_ID.test(userId) ? null : badHeader(`${HEADER_NAME} must be 1 to 256 characters.`);
}

/**
 * The last two steps of a call, after idempotency: user authorization (oauth2 apps) or the
 * app's own credential, then the upstream. Every failure is a contract body.
 */
export async function authorizeAndRun(
  deps: AppDeps,
  resolved: ResolvedTool,
  identity: CallIdentity,
  parameters: Record<string, unknown>,
  startedAt: number,
): Promise<ExecuteOutcome> {
  const { app } = resolved;
  let credentials: Credentials;
  if (app.auth.type === 'oauth2') {
    const grant = await userCredentials(
      deps.db.prisma,
      deps.envelope,
      app,
      identity.clientId,
      identity.userId as string,
    );
    if (!grant.ok) return grant;
    credentials = grant.credentials;
  } else {
    credentials = await serviceCredentials(app);
  }
  return runTool(resolved, parameters, credentials, startedAt, deps.config.upstreamTimeoutMs);
}
