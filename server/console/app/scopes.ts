/**
 * The scopes an API key can hold (docs/reference.md "API-key scopes"), as the console offers them,
 * besides `tools:execute:<appId>`, which it offers per registered app. server/auth/scopes.ts is
 * their one home; the page cannot import it (it would bundle zod), so test/console holds this
 * list to it.
 */
export const KEY_SCOPES = [
  'tools:execute',
  'oauth:initiate',
  'connections:read',
  'connections:write',
  'admin',
];
