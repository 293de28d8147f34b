import { useState } from 'preact/hooks';
import { api, withQuery } from '../api.ts';
import { describeError, ErrorNote, Loading, PageTitle, useLoad, When } from '../ui.tsx';

/** An audit event (docs/reference.md "Audit trail"): no secrets. */
interface AuditEvent {
  id: string;
  at: string;
  actor: string;
  action: string;
  target: string;
  details: Record<string, unknown>;
  hash: string;
}

interface Page {
  events: AuditEvent[];
  next_cursor?: string;
}

interface Verification {
  ok: boolean;
  checked: number;
  firstBadId?: string;
}

/** `datetime-local` text (the reader's zone) → ISO with a zone, as the API wants it. */
const toIso = (local: string) => (local ? new Date(local).toISOString() : '');

/** The audit trail: who changed what, newest first, and checking the hash chain. */
export function AuditPage() {
  const empty = { action: '', actor: '', since: '', until: '' };
  const [draft, setDraft] = useState(empty);
  const [filter, setFilter] = useState(empty);
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const page = useLoad(
    () =>
      api<Page>(
        'GET',
        withQuery('/admin/audit', {
          ...filter,
          since: toIso(filter.since),
          until: toIso(filter.until),
          limit: 50,
          cursor,
        }),
      ),
    [JSON.stringify(filter), cursor],
  );

  return (
    <>
      <PageTitle title="Audit trail" />
      <Verify />
      <form
        class="filters card"
        onSubmit={(event) => {
          event.preventDefault();
          setCursors([]);
          setFilter({ ...draft });
        }}
      >
        <div class="field">
          <label for="audit-action">Action</label>
          <input
            id="audit-action"
            placeholder="e.g. api_key.revoked"
            value={draft.action}
            onInput={(event) => setDraft({ ...draft, action: event.currentTarget.value.trim() })}
          />
        </div>
        <div class="field">
          <label for="audit-actor">Actor</label>
          <input
            id="audit-actor"
            placeholder="a key id, system, oidc:<sub>"
            value={draft.actor}
            onInput={(event) => setDraft({ ...draft, actor: event.currentTarget.value.trim() })}
          />
        </div>
        <div class="field">
          <label for="audit-since">Since</label>
          <input
            id="audit-since"
            type="datetime-local"
            step={1}
            value={draft.since}
            onInput={(event) => setDraft({ ...draft, since: event.currentTarget.value })}
          />
        </div>
        <div class="field">
          <label for="audit-until">Until</label>
          <input
            id="audit-until"
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
          <Loading what="events" />
        ) : null
      ) : page.data.events.length === 0 ? (
        <p class="empty">No event {Object.values(filter).some(Boolean) ? 'matches these filters' : 'yet'}.</p>
      ) : (
        <div class="table-wrap">
          <table class="audit">
            <caption class="sr-only">Audit events, newest first</caption>
            <thead>
              <tr>
                <th scope="col" class="num">
                  #
                </th>
                <th scope="col">When</th>
                <th scope="col">Action</th>
                <th scope="col">Target</th>
                <th scope="col">Actor</th>
                <th scope="col">Details</th>
              </tr>
            </thead>
            <tbody>
              {page.data.events.map((event) => (
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

/** Recomputes the whole chain on the server and says whether it holds, or the first event that does not. */
function Verify() {
  const [state, setState] = useState<
    | { kind: 'idle' }
    | { kind: 'busy' }
    | { kind: 'done'; result: Verification }
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
            setState({ kind: 'done', result: await api<Verification>('GET', '/admin/audit/verify') });
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
