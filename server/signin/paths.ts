/**
 * The paths of MCP sign-in (docs/reference.md "MCP sign-in"), below PUBLIC_URL: one place, so the
 * metadata documents, the route table and the redirects name the same ones.
 */
export const SIGNIN_PATH = {
  protectedResource: '/.well-known/oauth-protected-resource',
  protectedResourceMcp: '/.well-known/oauth-protected-resource/mcp',
  authorizationServer: '/.well-known/oauth-authorization-server',
  register: '/oauth2/register',
  authorize: '/oauth2/authorize',
  /** Where the consent form posts the person's decision. */
  decision: '/oauth2/authorize/decision',
  token: '/oauth2/token',
  revoke: '/oauth2/revoke',
  /** The OIDC provider's redirect back after the person signed in. */
  loginCallback: '/login/callback',
  /** A URL-elicitation link of a signed-in person. */
  start: '/oauth/start/{id}',
  me: '/me',
  meDisconnect: '/me/disconnect',
} as const;

/** The resource the tokens are for (RFC 8707, RFC 9728): `/mcp` of this server. */
export function mcpResource(publicUrl: string): string {
  return `${publicUrl}/mcp`;
}

/** The protected-resource metadata URL a 401 of /mcp names (`resource_metadata`). */
export function resourceMetadataUrl(publicUrl: string): string {
  return `${publicUrl}${SIGNIN_PATH.protectedResourceMcp}`;
}
