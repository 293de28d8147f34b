import { SingleFlight } from '../single-flight.ts';

/** What a refresh answers (oauth/refresh.ts); apart, so AppDeps can name the flights without a cycle. */
export type RefreshOutcome =
  | { ok: true; accessToken: string; scopes: string[] }
  /** The grant is gone (deleted meanwhile). */
  | { ok: false; error: 'auth_required' }
  /** The grant can't be refreshed any more; it is marked so. */
  | { ok: false; error: 'reauth_required' }
  /** The token endpoint answered something other than tokens (status and body are its own). */
  | { ok: false; error: 'upstream_error'; status: number; body: string }
  | { ok: false; error: 'upstream_unreachable' | 'upstream_timeout' };

/** In-flight refreshes of one server, keyed by grant: built in app.ts, held in AppDeps. */
export type RefreshFlights = SingleFlight<string, RefreshOutcome>;

export function createRefreshFlights(): RefreshFlights {
  return new SingleFlight<string, RefreshOutcome>();
}
