import { apiError, type ErrorBody } from '../../shared/errors.ts';
import type { PublicAuth } from '../../shared/schemas/apps.ts';
import type { AppDeps } from '../deps.ts';
import { err, type Result } from '../result.ts';

/**
 * Discovery of an MCP server's authorization server (`{ type: "oauth2", discover: true }`) is not
 * served yet: such a registration is refused at its pointer, with nothing stored.
 */
export async function discoverAuthorization(
  _deps: AppDeps,
  _url: string,
  _scopes: string[] | undefined,
): Promise<Result<{ publicAuth: PublicAuth; secret: string | null }, ErrorBody>> {
  return err(
    apiError('invalid_request', 'The app registration has problems.', {
      issues: [
        { path: '/auth/discover', message: 'Discovery of the authorization server is not available yet.' },
      ],
    }),
  );
}
