import { useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import type { ToolView } from '../../../../shared/schemas/agent.ts';
import type { AppView } from '../../../../shared/schemas/apps.ts';
import { api, withQuery } from '../api.ts';
import {
  bound,
  ConfirmButton,
  ErrorNote,
  LoadedView,
  Loading,
  PageTitle,
  ScrollRegion,
  Table,
  useLoad,
  When,
} from '../ui.tsx';

interface ToolsPage {
  tools: ToolView[];
  next_cursor?: string;
}

/**
 * One app: its registration (without secrets), its tools — browsed in catalog order or searched
 * with the ranked tool search of GET /tools (through GET /admin/tools) — the operations its
 * document had that could not become tools, and deleting it.
 */
export function AppDetailPage() {
  const { params } = useRoute();
  const { route } = useLocation();
  const appId = params.appId ?? '';
  const app = useLoad(() => api<AppView>('GET', `/admin/apps/${encodeURIComponent(appId)}`), [appId]);

  return (
    <>
      <PageTitle title={`App ${appId}`}>
        <ConfirmButton
          label="Delete app"
          confirm={`Delete the app ${appId}, its tools and every user's grant for it?`}
          onConfirm={async () => {
            await api('DELETE', `/admin/apps/${encodeURIComponent(appId)}`);
            route('/console/apps');
          }}
        />
      </PageTitle>
      <p>
        <a href="/console/apps">← All apps</a>
      </p>
      <LoadedView loaded={app} what="the app">
        {(data) => (
          <>
            <AppSummary app={data} />
            <Tools appId={appId} total={data.tools.length} />
            <Skipped app={data} />
          </>
        )}
      </LoadedView>
    </>
  );
}

function AppSummary({ app }: { app: AppView }) {
  const { type, ...auth } = app.auth;
  return (
    <section class="card" aria-labelledby="summary-title">
      <h2 id="summary-title">Registration</h2>
      <dl class="facts">
        <dt>Provider</dt>
        <dd>{app.provider}</dd>
        <dt>Base URL</dt>
        <dd class="mono wrap">{app.baseUrl}</dd>
        <dt>Authorization</dt>
        <dd>
          {type}
          {Object.keys(auth).length > 0 ? (
            <ul class="plain small">
              {Object.entries(auth).map(([name, value]) => (
                <li key={name}>
                  {name}:{' '}
                  <span class="mono wrap">{Array.isArray(value) ? value.join(' ') : String(value)}</span>
                </li>
              ))}
            </ul>
          ) : null}
        </dd>
        <dt>Updated</dt>
        <dd>
          <When at={app.updatedAt} />
        </dd>
      </dl>
    </section>
  );
}

function Tools({ appId, total }: { appId: string; total: number }) {
  const [typed, setTyped] = useState('');
  const [query, setQuery] = useState('');
  const [pages, setPages] = useState<string[]>([]);
  const cursor = pages[pages.length - 1];
  const tools = useLoad(
    () =>
      api<ToolsPage>(
        'GET',
        withQuery('/admin/tools', { appId, q: query, limit: query ? 20 : 50, cursor: cursor ?? '' }),
      ),
    [appId, query, cursor],
  );

  return (
    <section class="card" aria-labelledby="tools-title">
      <h2 id="tools-title">Tools ({total})</h2>
      <form
        class="search"
        onSubmit={(event) => {
          event.preventDefault();
          setPages([]);
          setQuery(typed.trim());
        }}
      >
        <label for="tool-search">Find a tool by describing the task</label>
        <div class="row">
          <input
            id="tool-search"
            type="search"
            placeholder="e.g. open a bug report in octocat/hello-world"
            {...bound(typed, setTyped)}
          />
          <button type="submit">Search</button>
          {query ? (
            <button
              type="button"
              onClick={() => {
                setTyped('');
                setQuery('');
                setPages([]);
              }}
            >
              Clear
            </button>
          ) : null}
        </div>
      </form>
      <ErrorNote error={tools.error} />
      {tools.data ? (
        tools.data.tools.length === 0 ? (
          <p class="empty">{query ? 'No tool fits this task.' : 'This app has no tools.'}</p>
        ) : (
          <ol class="tools" aria-busy={tools.loading}>
            {tools.data.tools.map((tool) => (
              <ToolItem key={tool.toolId} tool={tool} />
            ))}
          </ol>
        )
      ) : (
        <Loading what="tools" />
      )}
      <div class="pager">
        <button type="button" disabled={pages.length === 0} onClick={() => setPages(pages.slice(0, -1))}>
          Previous
        </button>
        <button
          type="button"
          disabled={!tools.data?.next_cursor}
          onClick={() => tools.data?.next_cursor && setPages([...pages, tools.data.next_cursor])}
        >
          Next
        </button>
      </div>
    </section>
  );
}

function ToolItem({ tool }: { tool: ToolView }) {
  return (
    <li class="tool">
      <details>
        <summary>
          <span class={`method m-${tool.method.toLowerCase()}`}>{tool.method}</span>{' '}
          <code class="tool-name">{tool.name}</code> <span class="tool-title">{tool.title}</span>
          {tool.score !== undefined ? (
            <span class="score" title="Relevance to the task">
              {tool.score.toFixed(2)}
            </span>
          ) : null}
        </summary>
        <div class="tool-body">
          <p class="mono small">
            {tool.toolId} · {tool.path}
            {tool.requiresUserAuth ? ' · acts for an end user' : ''}
            {tool.scopes.length > 0 ? ` · scopes: ${tool.scopes.join(' ')}` : ''}
          </p>
          {tool.description ? <p class="description">{tool.description}</p> : null}
          <h3 class="small">Parameters (JSON Schema)</h3>
          <ScrollRegion class="schema-box" label={`Parameters of ${tool.name}`}>
            <pre class="schema">{JSON.stringify(tool.parameters, null, 2)}</pre>
          </ScrollRegion>
        </div>
      </details>
    </li>
  );
}

function Skipped({ app }: { app: AppView }) {
  return (
    <section class="card" aria-labelledby="skipped-title">
      <h2 id="skipped-title">Skipped operations ({app.skipped.length})</h2>
      {app.skipped.length === 0 ? (
        <p class="empty">Every operation of the document became a tool.</p>
      ) : (
        <ScrollRegion label="Skipped operations">
          <Table
            head={
              <>
                <th scope="col">Operation</th>
                <th scope="col">operationId</th>
                <th scope="col">Why it was left out</th>
              </>
            }
            items={app.skipped}
            row={(operation) => (
              <tr key={`${operation.method} ${operation.path}`}>
                <td class="mono">
                  {operation.method.toUpperCase()} {operation.path}
                </td>
                <td class="mono">{operation.operationId ?? '—'}</td>
                <td>{operation.reason}</td>
              </tr>
            )}
          />
        </ScrollRegion>
      )}
    </section>
  );
}
