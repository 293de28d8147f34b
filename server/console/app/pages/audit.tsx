import { useState } from 'preact/hooks';
import type { AuditTrailPage, AuditVerification } from '../../../../shared/schemas/observe.ts';
import { api, withQuery } from '../api.ts';
import { type FilterField, FilterForm, PagedTable, Pager, toIso, usePagedList } from '../paged-list.tsx';
import { describeError, PageTitle, When } from '../ui.tsx';

type Filter = Record<'action' | 'actor' | 'since' | 'until', string>;

const FILTER_FIELDS: FilterField<Filter>[] = [
  { name: 'action', label: 'Action', placeholder: 'e.g. api_key.revoked' },
  { name: 'actor', label: 'Actor', placeholder: 'a key id, system, oidc:<sub>' },
  { name: 'since', label: 'Since', kind: 'datetime' },
  { name: 'until', label: 'Until', kind: 'datetime' },
];

/** The audit trail: who changed what, newest first, and checking the hash chain. */
export function AuditPage() {
  const list = usePagedList<Filter, AuditTrailPage>(
    { action: '', actor: '', since: '', until: '' },
    (filter, cursor) =>
      api<AuditTrailPage>(
        'GET',
        withQuery('/admin/audit', {
          ...filter,
          since: toIso(filter.since),
          until: toIso(filter.until),
          limit: 50,
          cursor,
        }),
      ),
  );

  return (
    <>
      <PageTitle title="Audit trail" />
      <Verify />
      <FilterForm list={list} fields={FILTER_FIELDS} idPrefix="audit" />
      <PagedTable
        list={list}
        what="events"
        none="No event"
        items={(data) => data.events}
        class="audit"
        caption="Audit events, newest first"
        head={
          <>
            <th scope="col" class="num">
              #
            </th>
            <th scope="col">When</th>
            <th scope="col">Action</th>
            <th scope="col">Target</th>
            <th scope="col">Actor</th>
            <th scope="col">Details</th>
          </>
        }
        row={(event) => (
          <tr key={event.id}>
            <td class="num mono small" title={`hash ${event.hash}`}>
              {event.id}
            </td>
            <td>
              <When at={event.at} />
            </td>
            <th scope="row" class="mono small">
              {event.action}
            </th>
            <td class="mono small wrap">{event.target}</td>
            <td class="mono small wrap">{event.actor}</td>
            <td class="mono small wrap">
              {Object.entries(event.details)
                .map(([name, value]) => `${name}: ${JSON.stringify(value)}`)
                .join(' · ')}
            </td>
          </tr>
        )}
      />
      <Pager list={list} />
    </>
  );
}

/** Recomputes the whole chain on the server and says whether it holds, or the first event that does not. */
function Verify() {
  const [state, setState] = useState<
    | { kind: 'idle' }
    | { kind: 'busy' }
    | { kind: 'done'; result: AuditVerification }
    | { kind: 'failed'; error: unknown }
  >({ kind: 'idle' });
  return (
    <section class="card verify" aria-labelledby="verify-title">
      <h2 id="verify-title">Hash chain</h2>
      <p class="muted small">
        Each event's hash covers the previous event's hash and its own content: changing, removing or
        reordering any stored event breaks the chain from there on.
      </p>
      <button
        type="button"
        class="primary"
        disabled={state.kind === 'busy'}
        onClick={async () => {
          setState({ kind: 'busy' });
          try {
            setState({ kind: 'done', result: await api<AuditVerification>('GET', '/admin/audit/verify') });
          } catch (error) {
            setState({ kind: 'failed', error });
          }
        }}
      >
        {state.kind === 'busy' ? 'Verifying…' : 'Verify the chain'}
      </button>
      <div aria-live="polite">
        {state.kind === 'done' ? (
          state.result.ok ? (
            <p class="note success verdict">
              Verified: all {state.result.checked} events follow from one another.
            </p>
          ) : (
            <p class="note error verdict" role="alert">
              The chain is broken at event {state.result.firstBadId} ({state.result.checked} checked): that
              event was altered, removed or moved.
            </p>
          )
        ) : null}
        {state.kind === 'failed' ? <p class="note error">{describeError(state.error)}</p> : null}
      </div>
    </section>
  );
}
