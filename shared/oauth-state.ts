/**
 * How long an end-user OAuth state (and so its authorization URL) works: 10 minutes
 * (docs/reference.md "End-user OAuth", **fixed**). The server expires states after it; the SDK waits no longer for a
 * user to authorize, since a later consent cannot succeed.
 */
export const OAUTH_STATE_LIFETIME_MS = 10 * 60 * 1000;
