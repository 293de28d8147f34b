import { randomUUID } from 'node:crypto';
import {
  CLIENT_CAPABILITIES_META_KEY,
  inputRequired,
  inputResponse,
  type RequestStateCodec,
  type ServerContext,
  UrlElicitationRequiredError,
} from '@modelcontextprotocol/server';
import type { ErrorBody } from '../../shared/errors.ts';
import type { AppDeps } from '../deps.ts';
import { startAuthorization } from '../oauth/initiate.ts';
import { isOAuthApp } from '../oauth/provider.ts';
import { createStartLink } from '../signin/start-links.ts';
import type { McpCatalogEntry } from './catalog.ts';
import { takesUrlElicitation } from './clients.ts';
import type { McpCall } from './context.ts';
import { type AuthorizationState, newCallNonce } from './request-state.ts';
import { errorResult, type ToolResult } from './results.ts';

/** The key of the one input request of an authorization round. */
const AUTHORIZE = 'authorize';

/**
 * A call that needs the user's grant (docs/reference.md "MCP", "Authorization inside MCP"): the server starts
 * the OAuth flow for (client, user, app) itself, with no client redirect URI, and hands the
 * provider's URL to the client the way the client can take it:
 * - 2026-07-28 with `elicitation.url`: an input-required result holding one URL elicitation and a
 *   signed `requestState`; the retry carries the state back and runs the tool once (a retry whose
 *   answer declined or cancelled the elicitation gets the tool error below instead of a new prompt);
 * - 2025 era with `elicitation.url` (declared at initialize): the -32042 URL-elicitation error;
 * - any other client: a tool error whose body adds `authorization_url`.
 */
export async function authorizationAnswer(
  deps: AppDeps,
  call: McpCall,
  entry: McpCatalogEntry,
  body: ErrorBody<'auth_required'>,
  ctx: ServerContext,
  era: 'legacy' | 'modern',
  codec: RequestStateCodec<AuthorizationState>,
  previous: AuthorizationState | undefined,
): Promise<ToolResult | ReturnType<typeof inputRequired>> {
  const { app } = entry;
  const userId = call.userId as string; // auth_required comes only after the user header passed
  if (!isOAuthApp(app)) return errorResult(body);
  // A signed-in person (MCP sign-in) gets a link that only their own browser can follow; a caller
  // with an API key names its user itself, so the provider's URL is handed on as before.
  const authorizationUrl = call.caller.userId
    ? await createStartLink(deps, { clientId: call.caller.clientId, userId, appId: app.appId })
    : (await startAuthorization(deps, call.caller.clientId, userId, app, null)).authorizationUrl;
  const message = `Connect ${app.appId} so that the assistant can use ${entry.tool.name} for you.`;
  call.log().info({ appId: app.appId, era }, 'mcp call needs the user to authorize');

  if (era === 'modern') {
    const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
    const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as
      | { elicitation?: { url?: unknown } }
      | undefined;
    // The user said no (or closed the prompt): asking again would loop; the model gets the link instead.
    const answer = inputResponse(ctx.mcpReq.inputResponses, AUTHORIZE);
    const refused = answer.kind === 'elicit' && answer.action !== 'accept';
    if (capabilities?.elicitation?.url !== undefined && !refused) {
      const state: AuthorizationState = { t: entry.toolId, n: previous?.n ?? newCallNonce() };
      return inputRequired({
        inputRequests: { [AUTHORIZE]: inputRequired.elicitUrl({ url: authorizationUrl, message }) },
        requestState: await codec.mint(state, ctx),
      });
    }
  } else if (
    call.caller.principal.keyId &&
    (await takesUrlElicitation(deps.db.prisma, call.caller.principal.keyId, userId))
  ) {
    throw new UrlElicitationRequiredError(
      [{ mode: 'url', url: authorizationUrl, message, elicitationId: randomUUID() }],
      `The user must connect ${app.appId} first; call the tool again after they have.`,
    );
  }
  return errorResult({ ...body, authorization_url: authorizationUrl });
}
