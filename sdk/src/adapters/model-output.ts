import type { OAuthStart } from '../agent-calls.ts';
import { type AuthTimeout, type Failure, failureMessage } from '../results.ts';

/**
 * What a model reads back from a toolgate tool, in every framework: the upstream's answer, or a
 * failure with one sentence saying what to do next (show the user a link, fix an argument, try
 * later) and the contract's details that help with it.
 *
 * @example { ok: true, data: { id: 'item-1', title: 'An item' } }
 * @example { ok: false, error: 'auth_required', app_id: 'github', authorization_url: 'https://…', expires_at: '…', message: 'The user has not connected github yet. …' }
 */
export type ModelToolOutput =
  | { ok: true; data: unknown }
  | ({ ok: false; error: string; message: string } & Record<string, unknown>);

/** At most this many characters of an upstream error body reach the model. */
const UPSTREAM_BODY_MAX = 4_000;

export function successOutput(data: unknown): ModelToolOutput {
  return { ok: true, data };
}

export interface Called {
  /** The tool's function name. */
  name: string;
  appId: string;
  /** The function the model called it through (`call_tool` of the search pair), if not by its name. */
  via?: string;
}

const again = (tool: Called) =>
  tool.via
    ? `then call ${tool.via} again with name ${tool.name} and the same arguments`
    : `then call ${tool.name} again with the same arguments`;

/** `auth_required` with a link to show the user (from `initiateOAuth`). */
export function authorizationLinkOutput(tool: Called, reauth: boolean, start: OAuthStart): ModelToolOutput {
  const what = reauth
    ? `The user's authorization for ${tool.appId} has expired or was revoked.`
    : `The user has not connected ${tool.appId} yet.`;
  return {
    ok: false,
    error: 'auth_required',
    app_id: tool.appId,
    ...(reauth ? { reauth_required: true } : {}),
    authorization_url: start.authorizationUrl,
    expires_at: start.expiresAt,
    message: `${what} Ask the user to open ${start.authorizationUrl} and allow access (the link works until ${start.expiresAt}), ${again(tool)}.`,
  };
}

/** `auth_required` when no link can be offered (no redirect URI configured, or `initiateOAuth` failed). */
export function authorizationNeededOutput(
  tool: Called,
  reauth: boolean,
  why: Failure | undefined,
): ModelToolOutput {
  const what = reauth
    ? `The user's authorization for ${tool.appId} has expired or was revoked`
    : `The user has not connected ${tool.appId} yet`;
  const detail = why
    ? `, and no authorization link could be made (${why.error}: ${failureMessage(why)})`
    : '';
  return {
    ok: false,
    error: 'auth_required',
    app_id: tool.appId,
    ...(reauth ? { reauth_required: true } : {}),
    message: `${what}${detail}. Ask the user to connect ${tool.appId} in this application, ${again(tool)}.`,
  };
}

/** Any other failure, with the sentence a model can act on. */
export function failureOutput(tool: Called, failure: Failure | AuthTimeout): ModelToolOutput {
  switch (failure.error) {
    case 'auth_timeout':
      return {
        ok: false,
        error: 'auth_timeout',
        app_id: failure.appId,
        ...(failure.authorizationUrl ? { authorization_url: failure.authorizationUrl } : {}),
        message: failure.authorizationUrl
          ? `The user did not authorize ${failure.appId} in time. Ask them to open ${failure.authorizationUrl} and allow access, ${again(tool)}.`
          : `The user did not authorize ${failure.appId} in time. Ask them to connect it, ${again(tool)}.`,
      };
    case 'invalid_parameters': {
      const issues = failure.body.issues;
      const list = issues.map((issue) => `${issue.path || '/'}: ${issue.message}`).join('; ');
      return {
        ok: false,
        error: 'invalid_parameters',
        issues,
        message: `The arguments do not fit ${tool.name}'s parameters (${list}). Correct them and call it again.`,
      };
    }
    case 'rbac_denied':
      return {
        ok: false,
        error: 'rbac_denied',
        scope: failure.body.scope,
        message: `${tool.name} may not run here: the permission "${failure.body.scope}" is missing. Do not retry; tell the user.`,
      };
    case 'upstream_error': {
      const body = failure.body.upstream_body;
      return {
        ok: false,
        error: 'upstream_error',
        upstream_status: failure.body.upstream_status,
        upstream_body: body.length > UPSTREAM_BODY_MAX ? `${body.slice(0, UPSTREAM_BODY_MAX)}…` : body,
        message: `${tool.appId} answered HTTP ${failure.body.upstream_status}; its answer is in upstream_body.`,
      };
    }
    case 'rate_limited':
      return {
        ok: false,
        error: 'rate_limited',
        retry_after: failure.body.retry_after,
        message: `Too many calls right now; wait ${failure.body.retry_after} seconds before calling ${tool.name} again.`,
      };
    case 'upstream_timeout':
    case 'upstream_unreachable':
      return {
        ok: false,
        error: failure.error,
        message: `${tool.appId} could not be reached (${failureMessage(failure)}). Try again later.`,
      };
    case 'network_error':
    case 'unexpected_response':
      return {
        ok: false,
        error: failure.error,
        message: `toolgate did not answer properly (${failureMessage(failure)}). Calling ${tool.name} again with the same arguments is safe: it runs at most once.`,
      };
    default:
      return { ok: false, error: failure.error, message: failureMessage(failure) };
  }
}

/** A call the adapters refuse before reaching toolgate: an unknown name, arguments that are not an object. */
export function refusedOutput(
  error: 'tool_not_found' | 'invalid_parameters',
  message: string,
): ModelToolOutput {
  return { ok: false, error, message };
}
