import type { Clock } from '../clock.ts';
import type { PrismaClient } from '../db/generated/client.ts';
import { clientRedirect } from './authorize.ts';
import { escapeHtml, formTargetOf } from './page.ts';
import { SIGNIN_PATH } from './paths.ts';
import { userIdOf } from './session.ts';
import type { SigninTokens } from './tokens.ts';

/**
 * The consent step of /oauth2/authorize (docs/reference.md "MCP sign-in"): a page naming the client
 * and what it may do, whose form posts `decision=approve|deny`; the decision spends the request
 * once (a conditional update, any server) and sends the browser back to the client with a code or
 * `error=access_denied`, `state` and `iss`.
 */

const REQUEST_ID = /^sar_[a-z0-9]{20}$/;

export interface PendingRequest {
  id: string;
  clientId: string;
  clientName: string;
  publicId: string;
  redirectUri: string;
  state: string | null;
  codeChallenge: string;
  scopes: string[];
}

/** A consent request still waiting (unused, unexpired), with its client; undefined otherwise. */
export async function pendingRequest(
  prisma: PrismaClient,
  clock: Clock,
  requestId: string | null,
): Promise<PendingRequest | undefined> {
  if (!requestId || !REQUEST_ID.test(requestId)) return undefined;
  const row = await prisma.signinRequest.findFirst({
    where: { id: requestId, usedAt: null, expiresAt: { gt: new Date(clock.now()) } },
    select: { id: true, clientId: true, redirectUri: true, state: true, codeChallenge: true, scopes: true },
  });
  if (!row) return undefined;
  const [client, signin] = await Promise.all([
    prisma.client.findUnique({ where: { id: row.clientId }, select: { name: true } }),
    prisma.signinClient.findUnique({ where: { clientId: row.clientId }, select: { publicId: true } }),
  ]);
  if (!client || !signin) return undefined;
  return { ...row, clientName: client.name, publicId: signin.publicId };
}

/** What each scope lets the client do, in words for the person. */
function describeScope(scope: string): string {
  if (scope === 'tools:execute') return 'run the tools of every app on your behalf';
  return `run the tools of the app <strong>${escapeHtml(scope.slice('tools:execute:'.length))}</strong> on your behalf`;
}

/** The consent page's body and the form targets its policy needs. */
export function consentPage(request: PendingRequest, sub: string, formToken: string) {
  const where = new URL(request.redirectUri);
  const destination = where.origin !== 'null' ? where.origin : `${where.protocol}//${where.host}`;
  const body = `<p><strong>${escapeHtml(request.clientName)}</strong> asks to use toolgate as you
(<code>${escapeHtml(sub)}</code>).</p>
<p>Client: <code>${escapeHtml(request.publicId)}</code><br>It will be sent back to: <code>${escapeHtml(destination)}</code></p>
<p>If you approve, it may:</p>
<ul>
${request.scopes.map((scope) => `<li>${describeScope(scope)}</li>`).join('\n')}
</ul>
<p>Apps that need your own account at a provider ask you to connect them the first time a tool needs them.</p>
<form method="post" action="${SIGNIN_PATH.decision}">
<input type="hidden" name="request" value="${escapeHtml(request.id)}">
<input type="hidden" name="form_token" value="${escapeHtml(formToken)}">
<button name="decision" value="approve">Approve</button>
<button name="decision" value="deny">Deny</button>
</form>`;
  return { body, formTargets: [formTargetOf(request.redirectUri)] };
}

/**
 * Spends the request and answers where the browser goes: the client's redirect URI with a fresh
 * code (approve) or `error=access_denied` (deny). undefined when the request was spent meanwhile.
 */
export async function decide(
  prisma: PrismaClient,
  clock: Clock,
  tokens: SigninTokens,
  issuer: string,
  request: PendingRequest,
  sub: string,
  approve: boolean,
): Promise<string | undefined> {
  const now = new Date(clock.now());
  const { count } = await prisma.signinRequest.updateMany({
    where: { id: request.id, usedAt: null, expiresAt: { gt: now } },
    data: { usedAt: now },
  });
  if (count !== 1) return undefined;
  if (!approve) return clientRedirect(request.redirectUri, { error: 'access_denied' }, request.state, issuer);
  const code = await tokens.issueCode({
    clientId: request.clientId,
    redirectUri: request.redirectUri,
    codeChallenge: request.codeChallenge,
    userId: userIdOf(sub),
    scopes: request.scopes,
  });
  return clientRedirect(request.redirectUri, { code }, request.state, issuer);
}
