import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppDeps } from '../deps.ts';
import { disconnect } from '../oauth/revoke.ts';
import { checkAuthorize } from '../signin/authorize.ts';
import { consentPage, decide, pendingRequest } from '../signin/consent.ts';
import { disconnectSubject, mePage, myConnections } from '../signin/me.ts';
import { sendOAuthError } from '../signin/oauth-error.ts';
import { sendPage, sendRedirect } from '../signin/page.ts';
import { SIGNIN_PATH } from '../signin/paths.ts';
import { LOGIN_COOKIE, LOGIN_TTL_S, readCookie, userIdOf } from '../signin/session.ts';
import type { Signin } from '../signin/signin.ts';
import { openStartLink, startLinkExists } from '../signin/start-links.ts';
import { discardBody, readFormBody } from './body.ts';
import type { RouteEntry } from './route-table.ts';

/**
 * The browser's side of MCP sign-in (docs/reference.md "MCP sign-in"): /oauth2/authorize, the
 * consent page and its decision, and the login provider's callback. Thin: the checks live in
 * signin/; these read the request, the session cookie, and write pages and redirects.
 */
export function signinPages(deps: AppDeps, signin: Signin): RouteEntry[] {
  const { logger } = deps;
  const { prisma } = deps.db;

  /** Sends the browser to sign in at the provider, to come back to `returnTo` (a path of ours). */
  const signInFirst: SignInFirst = async (res, returnTo) => {
    let start: Awaited<ReturnType<typeof signin.login.begin>>;
    try {
      start = await signin.login.begin(returnTo);
    } catch (error) {
      logger.error({ err: error }, 'sign-in: the login provider cannot be reached');
      sendPage(
        res,
        'Sign-in unavailable',
        '<p>The sign-in provider cannot be reached. Try again later.</p>',
        {
          status: 502,
        },
      );
      return;
    }
    sendRedirect(res, start.location, {
      'set-cookie': signin.sessions.cookie(LOGIN_COOKIE, start.binding, LOGIN_TTL_S),
    });
  };

  const decisionPath = (requestId: string) =>
    `${SIGNIN_PATH.decision}?request=${encodeURIComponent(requestId)}`;

  return [
    ...personPages(deps, signin, signInFirst),
    {
      method: 'GET',
      path: SIGNIN_PATH.authorize,
      head: false,
      handle: async (req, res, { url }) => {
        discardBody(req);
        const check = await checkAuthorize(
          signin.clients,
          prisma,
          deps.clock,
          signin.issuer,
          url.searchParams,
        );
        if (check.kind === 'refused') return sendOAuthError(res, check.error, 400);
        if (check.kind === 'redirect') return sendRedirect(res, check.location);
        const session = await signin.sessions.read(req.headers);
        if (session) return sendRedirect(res, `${signin.issuer}${decisionPath(check.requestId)}`);
        return signInFirst(res, decisionPath(check.requestId));
      },
    },
    {
      method: 'GET',
      path: SIGNIN_PATH.decision,
      head: false,
      handle: async (req, res, { url }) => {
        discardBody(req);
        const requestId = url.searchParams.get('request');
        const session = await signin.sessions.read(req.headers);
        const request = await pendingRequest(prisma, deps.clock, requestId);
        if (!request) return expiredRequest(res);
        if (!session) return signInFirst(res, decisionPath(request.id));
        const page = consentPage(
          request,
          session.sub,
          await signin.sessions.formToken(session.sub, request.id),
        );
        sendPage(res, `Allow ${request.clientName}?`, page.body, { formTargets: page.formTargets });
      },
    },
    {
      method: 'POST',
      path: SIGNIN_PATH.decision,
      handle: async (req, res) => {
        const posted = await readOwnForm(req, res, signin, deps.config.maxBodyBytes);
        if (!posted) return;
        const { form, session } = posted;
        const request = await pendingRequest(prisma, deps.clock, form.get('request'));
        if (!request) return expiredRequest(res);
        if (
          !session ||
          !(await signin.sessions.checkFormToken(session.sub, request.id, form.get('form_token')))
        )
          return sendPage(
            res,
            'Refused',
            '<p>This decision was not made in your signed-in browser. Start again from your application.</p>',
            { status: 403 },
          );
        const decision = form.get('decision');
        if (decision !== 'approve' && decision !== 'deny')
          return sendPage(res, 'Refused', '<p>The decision must be approve or deny.</p>', { status: 400 });
        const location = await decide(
          prisma,
          deps.clock,
          signin.tokens,
          signin.issuer,
          request,
          session.sub,
          decision === 'approve',
        );
        if (!location) return expiredRequest(res);
        logger.info({ clientId: request.clientId, decision }, 'mcp sign-in consent decided');
        sendRedirect(res, location);
      },
    },
    {
      method: 'GET',
      path: SIGNIN_PATH.loginCallback,
      head: false,
      handle: async (req, res, { url }) => {
        discardBody(req);
        const finished = await signin.login.finish(url.searchParams, readCookie(req.headers, LOGIN_COOKIE));
        const clearLogin = signin.sessions.cookie(LOGIN_COOKIE, '', 0);
        if (!finished.ok) {
          logger.info({ reason: finished.error }, 'sign-in not completed');
          const text =
            finished.error === 'denied'
              ? 'You did not sign in. Return to your application to try again.'
              : 'The sign-in could not be completed (the link may have expired, or been opened in another browser). Return to your application to try again.';
          return sendPage(res, 'Not signed in', `<p>${text}</p>`, {
            status: 400,
            headers: { 'set-cookie': clearLogin },
          });
        }
        const session = await signin.sessions.issue(finished.value.sub);
        sendRedirect(res, `${signin.issuer}${finished.value.returnTo}`, {
          'set-cookie': [clearLogin, session],
        });
      },
    },
  ];
}

/** GET /oauth/start/{id} (URL elicitation for a signed-in person) and the person's /me page. */
export function personPages(deps: AppDeps, signin: Signin, signInFirst: SignInFirst): RouteEntry[] {
  return [
    {
      method: 'GET',
      path: SIGNIN_PATH.start,
      head: false,
      handle: async (req, res, { params }) => {
        discardBody(req);
        const id = params.id as string;
        if (!(await startLinkExists(deps, id))) return unknownLink(res);
        const session = await signin.sessions.read(req.headers);
        if (!session) return signInFirst(res, `/oauth/start/${id}`);
        const opened = await openStartLink(deps, id, session.sub);
        if (opened.kind === 'unknown') return unknownLink(res);
        if (opened.kind === 'forbidden') {
          deps.logger.warn({ startId: id }, 'an authorization link was opened by another person');
          return sendPage(
            res,
            'Not your link',
            '<p>This link was made for another person: only the person who asked their assistant for it can connect the app with it. Ask your own assistant instead.</p>',
            { status: 403 },
          );
        }
        sendRedirect(res, opened.location);
      },
    },
    {
      method: 'GET',
      path: SIGNIN_PATH.me,
      handle: async (req, res) => {
        discardBody(req);
        const session = await signin.sessions.read(req.headers);
        if (!session) return signInFirst(res, SIGNIN_PATH.me);
        const connections = await myConnections(deps, session.sub);
        sendPage(res, 'Your connections', await mePage(signin.sessions, session.sub, connections));
      },
    },
    {
      method: 'POST',
      path: SIGNIN_PATH.meDisconnect,
      handle: async (req, res) => {
        const posted = await readOwnForm(req, res, signin, deps.config.maxBodyBytes);
        if (!posted) return;
        const { form, session } = posted;
        const clientId = form.get('client') ?? '';
        const appId = form.get('app') ?? '';
        if (
          !session ||
          !(await signin.sessions.checkFormToken(
            session.sub,
            disconnectSubject(clientId, appId),
            form.get('form_token'),
          ))
        )
          return sendPage(
            res,
            'Refused',
            '<p>Sign in again, then use the Disconnect button of your page.</p>',
            { status: 403 },
          );
        // The person signed in disconnects their own grant: the audit trail's actor is `oidc:<sub>`.
        const userId = userIdOf(session.sub);
        const outcome = await disconnect(deps, { clientId, userId, appId }, userId);
        if (!outcome.ok)
          return sendPage(res, 'Not connected', '<p>This app is not connected.</p>', { status: 404 });
        deps.logger.info({ clientId, appId }, 'connection removed from /me');
        res.writeHead(303, {
          location: `${signin.issuer}${SIGNIN_PATH.me}`,
          'cache-control': 'no-store',
          'content-length': '0',
        });
        res.end();
      },
    },
  ];
}

function unknownLink(res: ServerResponse): void {
  sendPage(res, 'Link expired', '<p>This link is unknown or has expired. Ask your assistant again.</p>', {
    status: 404,
  });
}

export type SignInFirst = (res: ServerResponse, returnTo: string) => Promise<void>;

function expiredRequest(res: ServerResponse): void {
  sendPage(
    res,
    'Request expired',
    '<p>This authorization request has expired or was already answered. Start again from your application.</p>',
    {
      status: 400,
    },
  );
}

/**
 * The form a browser posts from one of this site's pages, and the session it was posted in (none:
 * signed out). A form sent from another site (403) or one that cannot be read (400) is answered
 * here, and undefined returned.
 */
async function readOwnForm(
  req: IncomingMessage,
  res: ServerResponse,
  signin: Signin,
  limit: number,
): Promise<{ form: URLSearchParams; session: Awaited<ReturnType<Signin['sessions']['read']>> } | undefined> {
  if (!sameOrigin(req, signin.issuer)) {
    discardBody(req);
    sendPage(res, 'Refused', '<p>This form can only be sent from this site.</p>', { status: 403 });
    return undefined;
  }
  const form = await readFormBody(req, limit);
  if (!form.ok) {
    sendPage(res, 'Refused', '<p>The form could not be read.</p>', { status: 400 });
    return undefined;
  }
  return { form: form.value, session: await signin.sessions.read(req.headers) };
}

/** A browser's form post from this server's own page (an absent Origin is a non-browser client). */
function sameOrigin(req: IncomingMessage, issuer: string): boolean {
  const origin = req.headers.origin;
  return origin === undefined || origin === new URL(issuer).origin;
}
