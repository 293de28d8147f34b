import { createHash } from 'node:crypto';

/**
 * OAuth state facts: where the flow comes back, how a state is hashed (the state itself is a bearer
 * secret for the callback, so only its SHA-256 is stored) and the context its PKCE verifier is
 * sealed with. The rows themselves live in state-repository.ts.
 */

/** The path the provider redirects the browser back to, below PUBLIC_URL. */
export const CALLBACK_PATH = '/handleOAuthCallback';

export function callbackUrl(publicUrl: string): string {
  return `${publicUrl}${CALLBACK_PATH}`;
}

/** The page a flow without a client redirect URI (started from MCP) ends on. */
export const COMPLETE_PATH = '/oauth/complete';

/** `/oauth/complete` for one flow, by the id the server gave it (its state row's id): nothing else. */
export function completePageUrl(publicUrl: string, flowId: string): string {
  return `${publicUrl}${COMPLETE_PATH}?flow=${encodeURIComponent(flowId)}`;
}

export function hashState(state: string): string {
  return createHash('sha256').update(state, 'utf8').digest('hex');
}

/** The envelope context of a state's PKCE verifier: bound to its row. */
export function verifierContext(stateHash: string): string {
  return `oauth-state:${stateHash}`;
}
