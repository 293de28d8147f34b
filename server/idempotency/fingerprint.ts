import { createHash } from 'node:crypto';

/** What makes two calls "the same request" (docs/reference.md "Idempotency"). */
export interface RequestIdentity {
  /** Composite form `<appId>:::<toolName>`. */
  toolId: string;
  appId: string;
  /** X-Service-User-Id, or undefined when the call carries none. */
  userId: string | undefined;
  parameters: Record<string, unknown>;
}

/**
 * JSON with object keys sorted at every depth, so deep-equal values give equal text whatever the
 * order the caller wrote them in. Arrays keep their order; `undefined` members are left out as
 * JSON.stringify does (parameters come from a JSON body, so they hold nothing else unusual).
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.keys(value)
      .sort()
      .flatMap((name) => {
        const member = (value as Record<string, unknown>)[name];
        return member === undefined ? [] : [`${JSON.stringify(name)}:${canonicalJson(member)}`];
      });
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** SHA-256 (hex) of the request's identity; `v1` lets a future change of the recipe never match old rows. */
export function requestFingerprint(request: RequestIdentity): string {
  const text = canonicalJson({
    v: 1,
    toolId: request.toolId,
    appId: request.appId,
    userId: request.userId ?? null,
    parameters: request.parameters,
  });
  return createHash('sha256').update(text).digest('hex');
}
