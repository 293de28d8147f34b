import type { OpenAPIObject } from 'trpc-to-openapi';

const escapeHtml = (text: unknown): string =>
  String(text ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

interface Operation {
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: { name: string; in: string; required?: boolean; schema?: unknown }[];
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: unknown }> }>;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/**
 * /docs: a self-contained HTML reference rendered from /openapi.json on the server. No script and
 * no CDN, so it works offline and shows the same truth as the document.
 */
export function renderDocs(document: OpenAPIObject): string {
  const sections: string[] = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      const op = (item as Record<string, Operation | undefined>)[method];
      if (!op) continue;
      const params = (op.parameters ?? [])
        .map(
          (p) =>
            `<tr><td><code>${escapeHtml(p.name)}</code></td><td>${escapeHtml(p.in)}</td><td>${p.required ? 'yes' : 'no'}</td><td><pre>${escapeHtml(JSON.stringify(p.schema))}</pre></td></tr>`,
        )
        .join('');
      const body = op.requestBody?.content?.['application/json']?.schema;
      const ok = op.responses?.['200']?.content?.['application/json']?.schema;
      const id = `${method}-${path}`.replace(/[^A-Za-z0-9-]/g, '-');
      sections.push(`<section id="${escapeHtml(id)}">
<h2><span class="m ${method}">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></h2>
<p>${escapeHtml(op.summary)}</p>${op.description ? `<p>${escapeHtml(op.description)}</p>` : ''}
${params ? `<h3>Parameters</h3><table><tr><th>name</th><th>in</th><th>required</th><th>schema</th></tr>${params}</table>` : ''}
${body ? `<h3>Request body</h3><pre>${escapeHtml(JSON.stringify(body, null, 2))}</pre>` : ''}
${ok ? `<h3>200</h3><pre>${escapeHtml(JSON.stringify(ok, null, 2))}</pre>` : ''}
</section>`);
    }
  }
  const toc = sections.length
    ? Object.entries(document.paths ?? {})
        .flatMap(([path, item]) =>
          METHODS.filter((m) => (item as Record<string, unknown>)[m]).map(
            (m) =>
              `<li><a href="#${escapeHtml(`${m}-${path}`.replace(/[^A-Za-z0-9-]/g, '-'))}">${m.toUpperCase()} ${escapeHtml(path)}</a></li>`,
          ),
        )
        .join('')
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(document.info.title)} API reference</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;color:#1d2430}
code,pre{font-family:ui-monospace,monospace}pre{background:#f4f6f8;padding:.6rem;overflow:auto;border-radius:4px}
section{border-top:1px solid #dde3ea;padding-top:1rem;margin-top:1.5rem}
.m{display:inline-block;min-width:4.5em;text-align:center;border-radius:4px;color:#fff;font-size:.8em;padding:.1em .4em}
.get{background:#2f7d32}.post{background:#1565c0}.put{background:#8d5b00}.patch{background:#6a1b9a}.delete{background:#b71c1c}
table{border-collapse:collapse}td,th{border:1px solid #dde3ea;padding:.2rem .5rem;vertical-align:top;text-align:left}
</style></head><body>
<h1>${escapeHtml(document.info.title)} <small>${escapeHtml(document.info.version)}</small></h1>
<p>${escapeHtml(document.info.description)}</p>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI ${escapeHtml(document.openapi)}).</p>
<ul>${toc}</ul>
${sections.join('\n')}
</body></html>`;
}
