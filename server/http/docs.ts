import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * /docs: Swagger UI (swagger-ui-dist, served from the installed package, no CDN) rendering
 * /openapi.json. The page has no inline script, so its Content-Security-Policy can forbid every
 * origin but this one; the online spec validator Swagger UI would call is turned off.
 */

export const DOCS_PATH = '/docs';
export const DOCS_ASSETS_PATH = '/docs/assets/{file}';

/**
 * Our start-up script for the page (a file, not inline, for the CSP). "Try it out" calls the server
 * the page was loaded from — the only origin the CSP lets it reach — whatever PUBLIC_URL names in
 * the document (another host name for the same server, or a port the server chose itself).
 */
const INIT_SCRIPT = `fetch('openapi.json')
  .then((response) => response.json())
  .then((spec) => {
    spec.servers = [{ url: new URL('.', location.href).href.replace(/\\/$/, ''), description: 'this server' }];
    window.ui = SwaggerUIBundle({
      spec,
      dom_id: '#swagger-ui',
      deepLinking: true,
      docExpansion: 'list',
      defaultModelsExpandDepth: 0,
      displayRequestDuration: true,
      filter: true,
      persistAuthorization: false,
      validatorUrl: null,
    });
  });
`;

const TYPES: Record<string, string> = {
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.png': 'image/png',
};

/** The files the page loads: ours, or a fixed list from the package (never a path from the request). */
const PACKAGE_FILES = new Set([
  'swagger-ui.css',
  'swagger-ui-bundle.js',
  'favicon-32x32.png',
  'favicon-16x16.png',
]);

export const DOCS_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self' data:",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

// Relative links: /docs resolves them against /, and so does a server behind a path prefix.
export const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>toolgate API reference</title>
<link rel="stylesheet" href="docs/assets/swagger-ui.css">
<link rel="icon" type="image/png" href="docs/assets/favicon-32x32.png" sizes="32x32">
</head>
<body>
<div id="swagger-ui"></div>
<script src="docs/assets/swagger-ui-bundle.js"></script>
<script src="docs/assets/init.js"></script>
</body>
</html>
`;

let packageDir: string | undefined;
const cache = new Map<string, Promise<Buffer>>();

/** One asset of the page, read once from the package; undefined for any other name (404). */
export async function docsAsset(file: string): Promise<{ body: Buffer; type: string } | undefined> {
  const type = TYPES[path.extname(file)];
  if (file === 'init.js') return { body: Buffer.from(INIT_SCRIPT), type: TYPES['.js'] as string };
  if (!PACKAGE_FILES.has(file) || !type) return undefined;
  packageDir ??= path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  let body = cache.get(file);
  if (!body) {
    body = readFile(path.join(packageDir, file));
    cache.set(file, body);
    body.catch(() => cache.delete(file));
  }
  return { body: await body, type };
}
