/** What the adapter tests read from the SDK's recorded requests. */

export interface ProxyCall {
  toolId: string;
  parameters: unknown;
  key: string | null;
  userId: string | null;
}

/** The `POST /proxyV2` requests among those `recordingFetch` saw, in order. */
export function proxyCalls(
  sent: Array<{ method: string; path: string; headers: Headers; body: string }>,
): ProxyCall[] {
  return sent
    .filter((s) => s.method === 'POST' && s.path === '/proxyV2')
    .map((s) => {
      const body = JSON.parse(s.body) as { toolId: string; parameters: unknown };
      return {
        toolId: body.toolId,
        parameters: body.parameters,
        key: s.headers.get('x-service-idempotency-key'),
        userId: s.headers.get('x-service-user-id'),
      };
    });
}
