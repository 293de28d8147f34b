/**
 * How toolgate finds, and registers itself with, the authorization server of an MCP server
 * (docs/reference.md "Apps from MCP servers", MCP authorization): the server's protected-resource
 * metadata (RFC 9728) names its authorization server, whose metadata (RFC 8414, or OpenID
 * discovery) names the endpoints. toolgate is then a client there by its Client ID Metadata
 * Document (`<PUBLIC_URL>/.well-known/oauth-client`) when the server accepts those and toolgate is
 * served over https, else by dynamic registration (RFC 7591). The discovery and registration
 * requests are the MCP client SDK's own functions; this module decides what is acceptable.
 */
import { fetch as undiciFetch } from 'undici';
import { apiError, type ErrorBody } from '../../shared/errors.ts';
import type { PublicAuth } from '../../shared/schemas/apps.ts';
import { dispatcher } from '../calls/upstream.ts';
import type { AppDeps } from '../deps.ts';
import { err, ok, type Result } from '../result.ts';
import { callbackUrl } from './state.ts';

/** Where toolgate's Client ID Metadata Document is served, under PUBLIC_URL. */
export const CLIENT_METADATA_PATH = '/.well-known/oauth-client';

/** toolgate as an OAuth client of the MCP servers' authorization servers (the document's body). */
export function clientMetadataDocument(publicUrl: string) {
  return {
    client_id: `${publicUrl}${CLIENT_METADATA_PATH}`,
    client_name: 'toolgate',
    client_uri: publicUrl,
    redirect_uris: [callbackUrl(publicUrl)],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}

export interface DiscoveredAuth {
  publicAuth: PublicAuth;
  /** The client secret dynamic registration gave, sealed with the app; null for a public client. */
  secret: string | null;
}

const problem = (message: string): ErrorBody =>
  apiError('invalid_request', 'The app registration has problems.', {
    issues: [{ path: '/auth/discover', message }],
  });

/** Discovers the authorization server of the MCP server at `url` and registers toolgate there. */
export async function discoverAuthorization(
  deps: AppDeps,
  url: string,
  requestedScopes: string[] | undefined,
): Promise<Result<DiscoveredAuth, ErrorBody>> {
  const { discoverOAuthServerInfo, registerClient } = await import('@modelcontextprotocol/client');
  const fetchFn = limitedFetch(deps.config.upstreamTimeoutMs);
  let info: Awaited<ReturnType<typeof discoverOAuthServerInfo>>;
  try {
    info = await discoverOAuthServerInfo(url, { fetchFn });
  } catch (error) {
    return err(problem(`The MCP server's authorization metadata could not be read: ${reason(error)}`));
  }
  // Both kinds of metadata may name a revocation endpoint (RFC 8414 §2); the SDK's union types only one.
  const metadata = info.authorizationServerMetadata as
    | (NonNullable<typeof info.authorizationServerMetadata> & { revocation_endpoint?: string })
    | undefined;
  if (!metadata) {
    return err(
      problem(
        `No authorization server metadata (RFC 8414) was found for ${info.authorizationServerUrl}, the authorization server of the MCP server.`,
      ),
    );
  }
  const endpoints: Array<[string, string | undefined]> = [
    ['the authorization server', info.authorizationServerUrl],
    ['its authorization_endpoint', metadata.authorization_endpoint],
    ['its token_endpoint', metadata.token_endpoint],
    ['its registration_endpoint', metadata.registration_endpoint],
    ['its revocation_endpoint', metadata.revocation_endpoint],
  ];
  for (const [what, endpoint] of endpoints) {
    if (endpoint !== undefined && !secureOrLoopback(endpoint)) {
      return err(
        problem(`${upperFirst(what)} is not https (plain http is only accepted on loopback): ${endpoint}`),
      );
    }
  }
  const methods = metadata.code_challenge_methods_supported;
  if (Array.isArray(methods) && !methods.includes('S256')) {
    return err(problem('The authorization server does not support PKCE with S256.'));
  }
  const scopes = requestedScopes ?? info.resourceMetadata?.scopes_supported ?? [];
  const { publicUrl } = deps.config;
  const common = {
    type: 'oauth2' as const,
    discover: true as const,
    authorizationUrl: metadata.authorization_endpoint,
    tokenUrl: metadata.token_endpoint,
    ...(metadata.revocation_endpoint ? { revocationUrl: metadata.revocation_endpoint } : {}),
    scopes,
    // RFC 9207: required of every callback only where the server says it sends it.
    ...(metadata.authorization_response_iss_parameter_supported === true ? { issuer: metadata.issuer } : {}),
    resource: url,
  };
  // A Client ID Metadata Document must be fetched by the authorization server over https.
  if (metadata.client_id_metadata_document_supported === true && publicUrl.startsWith('https://')) {
    return ok({
      publicAuth: { ...common, clientId: `${publicUrl}${CLIENT_METADATA_PATH}`, tokenAuthMethod: 'none' },
      secret: null,
    });
  }
  if (!metadata.registration_endpoint) {
    return err(
      problem(
        "The authorization server offers neither dynamic client registration nor Client ID Metadata Documents (or toolgate's PUBLIC_URL is not https): register the app with explicit endpoints and a client of your own.",
      ),
    );
  }
  const { token_endpoint_auth_method: _none, ...wanted } = clientMetadataDocument(publicUrl);
  try {
    const registered = await registerClient(info.authorizationServerUrl, {
      metadata,
      clientMetadata: { ...wanted, token_endpoint_auth_method: 'client_secret_basic' },
      ...(scopes.length > 0 ? { scope: scopes.join(' ') } : {}),
      fetchFn,
    });
    const secret = registered.client_secret ?? null;
    const method = registered.token_endpoint_auth_method;
    return ok({
      publicAuth: {
        ...common,
        clientId: registered.client_id,
        tokenAuthMethod:
          secret === null
            ? 'none'
            : method === 'client_secret_post'
              ? 'client_secret_post'
              : 'client_secret_basic',
      },
      secret,
    });
  } catch (error) {
    return err(problem(`Dynamic client registration at the authorization server failed: ${reason(error)}`));
  }
}

/** https anywhere; plain http only to a loopback host (development, tests). */
export function secureOrLoopback(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
}

/** fetch for discovery and registration: our undici agent, one time-out per request. */
function limitedFetch(timeoutMs: number) {
  return (input: string | URL | Request, init?: RequestInit): Promise<Response> =>
    undiciFetch(
      input as string,
      {
        ...(init as object),
        dispatcher,
        signal: AbortSignal.timeout(timeoutMs),
      } as Parameters<typeof undiciFetch>[1],
    ) as unknown as Promise<Response>;
}

function reason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.slice(0, 300);
}

function upperFirst(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
