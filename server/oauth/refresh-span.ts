import { SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import { inSpan } from '../observe/tracing.ts';
import type { GrantKey } from './grants.ts';
import type { OAuthApp } from './provider.ts';
import type { RefreshOutcome } from './refresh-flights.ts';

/** Why a call refreshes: its token expires soon, or the upstream refused it (docs/reference.md). */
export type RefreshReason = 'expiring' | 'rejected';

/**
 * A refresh as a span of the tool call that waits for it (docs/reference.md "Traces"). No semantic
 * convention covers an OAuth refresh: the token endpoint is named as a peer the way the HTTP client
 * conventions name one (host, port, scheme; never its URL, whose query is the admin's to fill), and
 * the rest are ids. Never a token, a user id, the refresh's request or the provider's answer.
 * Callers that join a refresh already in flight (refresh.ts) each get their own span; the
 * database statements of the one refresh are children of the span of the call that started it.
 */
export function tracedRefresh(
  tracer: Tracer | undefined,
  app: OAuthApp,
  key: GrantKey,
  reason: RefreshReason,
  refresh: () => Promise<RefreshOutcome>,
): Promise<RefreshOutcome> {
  if (!tracer) return refresh();
  const tokenUrl = new URL(app.auth.tokenUrl);
  const attributes = {
    'toolgate.app_id': app.appId,
    'toolgate.client_id': key.clientId,
    'toolgate.refresh.reason': reason,
    'server.address': tokenUrl.hostname,
    'server.port': Number(tokenUrl.port) || (tokenUrl.protocol === 'https:' ? 443 : 80),
    'url.scheme': tokenUrl.protocol.slice(0, -1),
  };
  return inSpan(tracer, `refresh_token ${app.appId}`, SpanKind.INTERNAL, attributes, async (span) => {
    const outcome = await refresh();
    if (outcome.ok) span?.setAttribute('toolgate.outcome', 'ok');
    else {
      const failure = outcome.error;
      span?.setAttribute('toolgate.outcome', failure.kind);
      if (failure.kind === 'upstream_error') span?.setAttribute('http.response.status_code', failure.status);
      span?.setAttribute('error.type', failure.kind);
      span?.setStatus({ code: SpanStatusCode.ERROR });
    }
    return outcome;
  });
}
