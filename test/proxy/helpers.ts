/** Fixtures of the apps, /tools and /proxyV2 tests (the agent, apps and calls: ../support/agent.ts). */

/** A path segment as the contract's percent-encoding makes it: all but RFC 3986 unreserved characters. */
export function strictlyEncoded(value: string): string {
  return encodeURIComponent(value).replace(
    /[!'()*]/g,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/** An oauth2 registration of the fixture upstream (the provider endpoints are never contacted by these tests). */
export function oauth2Auth(scopes: string[] = ['profile:read', 'notes:write']) {
  return {
    type: 'oauth2',
    authorizationUrl: 'https://auth.example/authorize',
    tokenUrl: 'https://auth.example/token',
    clientId: 'toolgate-client',
    clientSecret: 'oauth-client-secret-do-not-leak',
    scopes,
  };
}
