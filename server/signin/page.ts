import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';

/**
 * The HTML pages of sign-in (consent, the person's connections, refusals): rendered on the server,
 * no script, no outside request. The policy allows only the page's own inline style (by nonce),
 * forms posting to this server (and, for consent, the client's redirect URI, where the decision's
 * redirect goes: Chromium applies form-action to it), and no framing.
 */

export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export interface PageOptions {
  status?: number;
  /** Extra form-action sources besides 'self' (the consent page's redirect target). */
  formTargets?: string[];
  headers?: Record<string, string | string[]>;
}

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#222}' +
  'h1{font-size:1.5rem}button{font:inherit;padding:.4rem 1rem;margin-right:.5rem}' +
  'table{border-collapse:collapse}td,th{padding:.3rem .6rem;text-align:left;border-bottom:1px solid #ddd}';

/** Writes one page: `body` is trusted HTML (callers escape what they put in it). */
export function sendPage(res: ServerResponse, title: string, body: string, options: PageOptions = {}): void {
  const nonce = randomBytes(16).toString('base64');
  const formAction = ["'self'", ...(options.formTargets ?? [])].join(' ');
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>toolgate · ${escapeHtml(title)}</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
${body}
</body>
</html>
`;
  res.writeHead(options.status ?? 200, {
    ...options.headers,
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(html),
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'content-security-policy': `default-src 'none'; style-src 'nonce-${nonce}'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
  });
  res.end(html);
}

/** A 302 with no body and nothing cached. */
export function sendRedirect(
  res: ServerResponse,
  location: string,
  headers: Record<string, string | string[]> = {},
): void {
  res.writeHead(302, {
    ...headers,
    location,
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'content-length': '0',
  });
  res.end();
}

/** The CSP source that lets a form's redirect reach `uri`: its origin, or its scheme (`cursor:`). */
export function formTargetOf(uri: string): string {
  const url = new URL(uri);
  return url.origin !== 'null' ? url.origin : url.protocol;
}
