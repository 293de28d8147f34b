/** Header names of the contract (docs/reference.md "Calling conventions"), lower-cased as Node presents them. */
export const HEADER = {
  authorization: 'authorization',
  clientId: 'x-service-client-id',
  userId: 'x-service-user-id',
  appId: 'x-service-app-id',
  idempotencyKey: 'x-service-idempotency-key',
  requestId: 'x-request-id',
  idempotentReplayed: 'x-service-idempotent-replayed',
  retryAfter: 'retry-after',
} as const;
