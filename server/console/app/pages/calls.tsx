import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import type { CallLogPage } from '../../../../shared/schemas/observe.ts';
import { api, withQuery } from '../api.ts';
import { type FilterField, FilterForm, PagedTable, Pager, toIso, usePagedList } from '../paged-list.tsx';
import { Outcome, PageTitle, When } from '../ui.tsx';

const FIELDS = ['clientId', 'userId', 'appId', 'toolId', 'outcome'] as const;
type Field = (typeof FIELDS)[number];
type Filter = Record<Field | 'since' | 'until', string>;

const FILTER_FIELDS: FilterField<Filter>[] = [
  { name: 'clientId', label: 'Client id' },
  { name: 'userId', label: 'User id' },
  { name: 'appId', label: 'App id' },
  { name: 'toolId', label: 'Tool id' },
  { name: 'outcome', label: 'Outcome (ok or an error code)' },
  { name: 'since', label: 'Since', kind: 'datetime' },
  { name: 'until', label: 'Until', kind: 'datetime' },
];

/** The refresh period of the newest page while "Auto-refresh" is on. */
const REFRESH_MS = 5_000;

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
  const list = usePagedList<Filter, CallLogPage>(
    () => initialFilter(query),
    (filter, cursor) =>
      api<CallLogPage>(
        'GET',
        withQuery('/admin/calls', {
          ...filter,
          since: toIso(filter.since),
          until: toIso(filter.until),
          limit: 50,
          cursor,
        }),
      ),
  );
  const { page, cursor } = list;
  const [auto, setAuto] = useState(false);

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
      <FilterForm list={list} fields={FILTER_FIELDS} idPrefix="calls" />
      <PagedTable
        list={list}
        what="calls"
        none="No call"
        items={(data) => data.calls}
        class="calls"
        busy={page.loading}
        caption="Tool calls, newest first"
        head={
          <>
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
          </>
        }
        row={(call) => (
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
        )}
      />
      <Pager list={list} />
    </>
  );
}
