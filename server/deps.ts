import type { Logger } from 'pino';
import type { AppRegistry } from './apps/registry.ts';
import type { ApiKeyVerifier } from './auth/authenticate.ts';
import type { SlidingWindowLimiter } from './auth/rate-limit.ts';
import type { Clock } from './clock.ts';
import type { Config } from './config.ts';
import type { ConsoleSessions } from './console/sessions.ts';
import type { Envelope } from './crypto/envelope.ts';
import type { Database } from './db/database.ts';
import type { IdempotencyService } from './idempotency/service.ts';
import type { Metrics } from './metrics.ts';
import type { GrantCache } from './oauth/grant-cache.ts';
import type { IssuerPolicy } from './oauth/issuer.ts';
import type { RefreshFlights } from './oauth/refresh-flights.ts';
import type { OAuthStateRepository } from './oauth/state-repository.ts';
import type { CallLog } from './observe/call-log.ts';
import type { Tracing } from './observe/tracing.ts';
import type { ToolSearch } from './search/service.ts';
import type { Signin } from './signin/signin.ts';

/** What lives as long as the server: built once in app.ts, shared by every request. */
export interface AppDeps {
  config: Config;
  db: Database;
  clock: Clock;
  logger: Logger;
  keys: ApiKeyVerifier;
  envelope: Envelope;
  apps: AppRegistry;
  /** Ranked tool search over every app's segment (GET /tools?q=, MCP search mode). */
  search: ToolSearch;
  limiter: SlidingWindowLimiter;
  idempotency: IdempotencyService;
  /** Prometheus metrics: the tool-call core reports each call (recordCall), OAuth each refresh. */
  metrics: Metrics;
  /** OpenTelemetry, when OTEL_EXPORTER_OTLP_ENDPOINT is set; undefined (no SDK loaded) otherwise. */
  tracing: Tracing | undefined;
  /** The call log's writer: every tool call hands it one record (observe/call-log.ts). */
  callLog: CallLog;
  /** Opened end-user grants, so a warm OAuth call runs no query (oauth/grant-cache.ts). */
  grants: GrantCache;
  /** In-flight OAuth refreshes of this server, one per grant (oauth/refresh.ts). */
  refreshes: RefreshFlights;
  /** OAuth state rows: create, find, claim (the single-use rule). */
  states: OAuthStateRepository;
  /** RFC 9207 `iss` checks of the OAuth callback, with the providers' metadata cached. */
  issuers: IssuerPolicy;
  /** Web console sign-ins: an admin key exchanged for a session cookie (console/sessions.ts). */
  consoleSessions: ConsoleSessions;
  /** MCP sign-in (docs/reference.md "MCP sign-in"); undefined when LOGIN_OIDC_* are unset. */
  signin: Signin | undefined;
}
