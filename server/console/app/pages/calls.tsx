import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, withQuery } from '../api.ts';
import { ErrorNote, Loading, Outcome, PageTitle, useLoad, When } from '../ui.tsx';

/** A call-log record (docs/reference.md "Call log"): never parameters, bodies or tokens. */
export interface CallView {
  id: string;
  at: string;
  durationMs: number;
  surface: 'rest' | 'trpc' | 'mcp';
  keyId: string | null;
  clientId: string;
  userId: string | null;
  appId: string | null;
  toolId: string | null;
  outcome: string;
  status: number;
  upstreamStatus: number | null;
  idempotentReplay: boolean;
  requestId: string;
}

interface Page {
  calls: CallView[];
  next_cursor?: string;
}

const FIELDS = ['clientId', 'userId', 'appId', 'toolId', 'outcome'] as const;
type Field = (typeof FIELDS)[number];
type Filter = Record<Field | 'since' | 'until', string>;

const LABELS: Record<Field, string> = {
  clientId: 'Client id',
  userId: 'User id',
  appId: 'App id',
  toolId: 'Tool id',
  outcome: 'Outcome (ok or an error code)',
};

/** The refresh period of the newest page while "Auto-refresh" is on. */
const REFRESH_MS = 5_000;

/** `datetime-local` text (the reader's zone) → ISO with a zone, as the API wants it. */
const toIso = (local: string) => (local ? new Date(local).toISOString() : '');

/** The filters the page was opened with (the overview links here with `?outcome=…`). */
function initialFilter(query: Record<string, string>): Filter {
  const filter: Filter = {
    clientId: '',
    userId: '',
    appId: '',
    toolId: '',
    outcome: '',
    since: '',
    until: '',
  };
  for (const field of FIELDS) filter[field] = query[field] ?? '';
  return filter;
}

/** The call log: newest first, filtered, paged, refreshed every few seconds while wanted. */
export function CallsPage() {
  const { query } = useLocation();
  const [draft, setDraft] = useState<Filter>(() => initialFilter(query));
  const [filter, setFilter] = useState<Filter>(draft);
  const [cursors, setCursors] = useState<string[]>([]);
  const [auto, setAuto] = useState(false);
  const cursor = cursors[cursors.length - 1];
  const page = useLoad(
    () =>
      api<Page>(
        'GET',
        withQuery('/admin/calls', {
          ...filter,
          since: toIso(filter.since),
          until: toIso(filter.until),
          limit: 50,
          cursor,
        }),
      ),
    [JSON.stringify(filter), cursor],
  );

  // Only the newest page refreshes: an older page stays put while it is being read.
  useEffect(() => {
    if (!auto || cursor !== undefined) return;
    const timer = setInterval(page.reload, REFRESH_MS);
    return () => clearInterval(timer);
  }, [auto, cursor, page.reload]);

  return (
    <>
      <PageTitle title="Call log">
        <label class="check">
          <input type="checkbox" checked={auto} onChange={() => setAuto(!auto)} /> Auto-refresh (every{' '}
          {REFRESH_MS / 1000} s)
        </label>
      </PageTitle>
      <form
        class="filters card"
        onSubmit={(event) => {
          event.preventDefault();
          setCursors([]);
          setFilter({ ...draft });
        }}
      >
        {FIELDS.map((field) => (
          <div class="field" key={field}>
            <label for={`calls-${field}`}>{LABELS[field]}</label>
            <input
              id={`calls-${field}`}
              value={draft[field]}
              onInput={(event) => setDraft({ ...draft, [field]: event.currentTarget.value.trim() })}
            />
          </div>
        ))}
        <div class="field">
          <label for="calls-since">Since</label>
          <input
            id="calls-since"
            type="datetime-local"
            step={1}
            value={draft.since}
            onInput={(event) => setDraft({ ...draft, since: event.currentTarget.value })}
          />
        </div>
        <div class="field">
          <label for="calls-until">Until</label>
          <input
            id="calls-until"
            type="datetime-local"
            step={1}
            value={draft.until}
            onInput={(event) => setDraft({ ...draft, until: event.currentTarget.value })}
          />
        </div>
        <div class="field actions">
          <button type="submit" class="primary">
            Filter
          </button>
        </div>
      </form>
      <ErrorNote error={page.error} />
      {page.data === undefined ? (
        page.loading ? (
          <Loading what="calls" />
        ) : null
      ) : page.data.calls.length === 0 ? (
        <p class="empty">No call {Object.values(filter).some(Boolean) ? 'matches these filters' : 'yet'}.</p>
      ) : (
        <div class="table-wrap">
          <table class="calls" aria-busy={page.loading}>
            <caption class="sr-only">Tool calls, newest first</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Tool</th>
                <th scope="col">Outcome</th>
                <th scope="col" class="num">
                  Status
                </th>
                <th scope="col" class="num">
                  ms
                </th>
                <th scope="col">Client · user</th>
                <th scope="col">Key · surface · request</th>
              </tr>
            </thead>
            <tbody>
              {page.data.calls.map((call) => (
                <tr key={call.id}>
                  <td>
                    <When at={call.at} />
                  </td>
                  <th scope="row" class="mono small wrap">
                    {call.toolId ?? <span class="muted">—</span>}
                  </th>
                  <td>
                    <Outcome outcome={call.outcome} />
                    {call.idempotentReplay ? <span class="chip">replay</span> : null}
                  </td>
                  <td class="num">
                    {call.status}
                    {call.upstreamStatus !== null ? (
                      <div class="muted small" title="The upstream's status">
                        upstream {call.upstreamStatus}
                      </div>
                    ) : null}
                  </td>
                  <td class="num">{call.durationMs}</td>
                  <td class="mono small wrap">
                    {call.clientId}
                    {call.userId !== null ? <div>{call.userId}</div> : null}
                  </td>
                  <td class="mono small wrap">
                    {call.keyId ?? '—'} · {call.surface}
                    <div class="muted">{call.requestId}</div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div class="pager">
        <button
          type="button"
          disabled={cursors.length === 0}
          onClick={() => setCursors(cursors.slice(0, -1))}
        >
          Newer
        </button>
        <button
          type="button"
          disabled={!page.data?.next_cursor}
          onClick={() => page.data?.next_cursor && setCursors([...cursors, page.data.next_cursor])}
        >
          Older
        </button>
      </div>
    </>
  );
}
