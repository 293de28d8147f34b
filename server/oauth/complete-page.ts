import { ID_PATTERN } from '../../shared/ids.ts';

/** A `reason` shown on the page only when it looks like an error code (the callback sets it). */
const REASON = /^[a-z][a-z0-9_.-]{0,63}$/i;

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * GET /oauth/complete (docs/reference.md "Other paths", §9): where an authorization started from MCP ends. It says
 * whether the app is now connected and that the user can go back to the assistant; it shows no
 * token, code or state (the callback never puts one in its query).
 */
export function renderCompletePage(query: URLSearchParams): string {
  const appParam = query.get('app') ?? '';
  const app = ID_PATTERN.test(appParam) ? appParam : null;
  const connected = query.get('status') === 'success';
  const reasonParam = query.get('reason') ?? '';
  const reason = REASON.test(reasonParam) ? reasonParam : null;
  const name = app ? `<strong>${escapeHtml(app)}</strong>` : 'The app';
  const title = connected ? 'Connected' : 'Not connected';
  const text = connected
    ? `${name} is now connected. You can return to your assistant; it can use the app for you now.`
    : `${name} was not connected${reason ? ` (${escapeHtml(reason)})` : ''}. You can return to your assistant and try again.`;
  return `<!doctype html>
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
`;
}
