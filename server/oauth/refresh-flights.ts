import type { Result } from '../result.ts';
import { SingleFlight } from '../single-flight.ts';

/** Why a refresh gave no token. */
export type RefreshFailure =
  /** The grant is gone (deleted meanwhile). */
  | { kind: 'auth_required' }
  /** The grant can't be refreshed any more; it is marked so. */
  | { kind: 'reauth_required' }
  /** The token endpoint answered something other than tokens (status and body are its own). */
  | { kind: 'upstream_error'; status: number; body: string }
  /** `cause`: the connection failure's code, for the log and the answer's `cause`. */
  | { kind: 'upstream_unreachable'; cause: string }
  | { kind: 'upstream_timeout' };

/** What a refresh answers (oauth/refresh.ts); apart, so AppDeps can name the flights without a cycle. */
export type RefreshOutcome = Result<{ accessToken: string; scopes: string[] }, RefreshFailure>;

/** In-flight refreshes of one server, keyed by grant: built in app.ts, held in AppDeps. */
export type RefreshFlights = SingleFlight<string, RefreshOutcome>;

export function createRefreshFlights(): RefreshFlights {
  return new SingleFlight<string, RefreshOutcome>();
}
