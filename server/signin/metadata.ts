import { SCOPE } from '../auth/scopes.ts';
import { mcpResource, SIGNIN_PATH } from './paths.ts';

/**
 * The two discovery documents of MCP sign-in. The scopes a token may carry are those of the tools
 * (docs/reference.md "Administration", API-key scopes): `tools:execute`, or the per-app form.
 */

/** The scopes a client may ask for by name; `tools:execute:<appId>` is accepted too. */
export const SIGNIN_SCOPES = [SCOPE.toolsExecute] as const;

/**
 * RFC 9728 protected-resource metadata of `/mcp`.
 * @see https://www.rfc-editor.org/rfc/rfc9728#section-2
 */
export function protectedResourceMetadata(publicUrl: string) {
  return {
    resource: mcpResource(publicUrl),
    authorization_servers: [publicUrl],
    scopes_supported: [...SIGNIN_SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'toolgate',
  };
}

/**
 * RFC 8414 authorization-server metadata: this server is the issuer, with PKCE S256 only, public
 * clients only, dynamic registration and Client ID Metadata Documents.
 * @see https://www.rfc-editor.org/rfc/rfc8414#section-2
 */
export function authorizationServerMetadata(publicUrl: string) {
  return {
    issuer: publicUrl,
    authorization_endpoint: `${publicUrl}${SIGNIN_PATH.authorize}`,
    token_endpoint: `${publicUrl}${SIGNIN_PATH.token}`,
    registration_endpoint: `${publicUrl}${SIGNIN_PATH.register}`,
    revocation_endpoint: `${publicUrl}${SIGNIN_PATH.revoke}`,
    scopes_supported: [...SIGNIN_SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    code_challenge_methods_supported: ['S256'],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };
}
