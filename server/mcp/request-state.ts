import { randomBytes } from 'node:crypto';
import {
  createRequestStateCodec,
  type RequestStateCodec,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { LIMITS } from '../config.ts';
import type { AppDeps } from '../deps.ts';
import { sharedSecret } from './shared-secret.ts';

/**
 * The multi-round-trip `requestState` of an authorization round (2026-07-28): signed with HMAC by
 * a key every server of the cluster shares, so whichever server the retry reaches verifies it;
 * bound to the API key, client and user of the request (a state echoed under another identity is
 * refused), and naming the tool it was minted for. `n` names the logical call: its retries share
 * one idempotency key, so the tool runs once however often the client retries.
 */
export interface AuthorizationState {
  /** Composite tool id the state was minted for. */
  t: string;
  /** 128-bit nonce of the logical call. */
  n: string;
}

/** Who a request state is bound to; the adapter puts it into the SDK's `authInfo.extra`. */
export interface StateBinding {
  keyId: string;
  clientId: string;
  userId: string | undefined;
}

export const STATE_BINDING = 'toolgate/binding';

function bindingOf(ctx: ServerContext): string {
  const binding = ctx.http?.authInfo?.extra?.[STATE_BINDING] as StateBinding | undefined;
  // No binding (never the case behind our adapter) binds to nothing a real caller has.
  if (!binding) return '\u0000';
  return JSON.stringify([binding.keyId, binding.clientId, binding.userId ?? null]);
}

export function newCallNonce(): string {
  return randomBytes(16).toString('hex');
}

/** The codec, built once per server from the cluster's shared key (made on first use). */
export function requestStateCodecs(deps: AppDeps): () => Promise<RequestStateCodec<AuthorizationState>> {
  let codec: Promise<RequestStateCodec<AuthorizationState>> | undefined;
  return () => {
    codec ??= sharedSecret(deps.db.prisma, deps.envelope, 'mcp-request-state').then((key) =>
      createRequestStateCodec<AuthorizationState>({
        key: new Uint8Array(key),
        ttlSeconds: LIMITS.oauthStateTtlMs / 1000,
        bind: bindingOf,
      }),
    );
    // A failed load (database down) is not kept: the next request tries again.
    codec.catch(() => {
      codec = undefined;
    });
    return codec;
  };
}
