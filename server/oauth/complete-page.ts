import type { AppDeps } from '../deps.ts';
import { ID_PREFIX } from '../ids.ts';

/** A flow id as the server issues them (an OAuth state row's id); anything else is not looked up. */
const FLOW_ID = new RegExp(`^${ID_PREFIX.oauthState}_[a-z0-9]{20}$`);

/**
 * What the page says for each outcome the callback records: fixed sentences, so no text of a
 * request (nor a provider's error code, which whoever started the flow can choose) reaches it.
 */
const FAILURES = new Map([
  ['access_denied', 'the authorization was declined'],
  ['state_invalid', 'the link had expired or was already used'],
  ['code_exchange_failed', 'the provider did not complete the authorization'],
  ['issuer_mismatch', 'the answer did not come from the expected provider'],
  ['server_error', 'the service could not store the authorization'],
]);
const OTHER_FAILURE = 'the provider refused the authorization';

/** Headers of the page: HTML that no other site may frame and no browser may sniff as anything else. */
const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
} as const;

export interface CompletePage {
  headers: Record<string, string>;
  html: string;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * GET /oauth/complete?flow=<id> (docs/reference.md "Other paths", "MCP"): where an authorization
 * started from MCP ends. It renders only what the server knows: the flow is looked up by the id the
 * callback put in the URL (in the database, so any server answers), and the page names its app and
 * says whether it is now connected, in fixed words. An unknown or missing id gets a neutral page.
 * Nothing else of the query is read; no token, code or state ever appears.
 */
export async function completePage(deps: AppDeps, query: URLSearchParams): Promise<CompletePage> {
  const flowId = query.get('flow');
  const flow = flowId !== null && FLOW_ID.test(flowId) ? await deps.states.findFlow(flowId) : null;
  if (!flow) {
    return page(
      'Nothing to show',
      'This page shows how connecting an app to your assistant went, and there is nothing to show here. You can return to your assistant.',
    );
  }
  const name = `<strong>${escapeHtml(flow.appId)}</strong>`;
  if (flow.outcome === null) {
    return page(
      'Not finished',
      `Connecting ${name} has not finished. Complete it in the window the assistant opened, then return to your assistant.`,
    );
  }
  if (flow.outcome === 'success') {
    return page(
      'Connected',
      `${name} is now connected. You can return to your assistant; it can use the app for you now.`,
    );
  }
  const why = FAILURES.get(flow.outcome) ?? OTHER_FAILURE;
  return page(
    'Not connected',
    `${name} was not connected: ${why}. You can return to your assistant and try again.`,
  );
}

function page(title: string, text: string): CompletePage {
  return {
    headers: { ...PAGE_HEADERS },
    html: `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>toolgate · ${title}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#222}h1{font-size:1.5rem}</style>
</head>
<body>
<h1>${title}</h1>
<p>${text}</p>
</body>
</html>
`,
  };
}
