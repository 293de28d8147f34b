import { useState } from 'preact/hooks';
import type { AdminConnectionView } from '../../../../shared/schemas/admin.ts';
import { api, withQuery } from '../api.ts';
import { ConfirmButton, ErrorNote, Loading, PageTitle, useLoad, When } from '../ui.tsx';
import type { ClientView } from './clients.tsx';

interface Page {
  connections: AdminConnectionView[];
  next_cursor?: string;
}

interface Filter {
  clientId: string;
  userId: string;
  appId: string;
}

/** Consecutive connections of one (client, user): the page lists them user by user. */
function byUser(connections: AdminConnectionView[]): AdminConnectionView[][] {
  const groups: AdminConnectionView[][] = [];
  for (const connection of connections) {
    const last = groups[groups.length - 1]?.[0];
    if (last && last.clientId === connection.clientId && last.userId === connection.userId)
      groups[groups.length - 1]?.push(connection);
    else groups.push([connection]);
  }
  return groups;
}

/** Connections: end users' grants, user by user, and disconnecting one. */
export function ConnectionsPage() {
  const [draft, setDraft] = useState<Filter>({ clientId: '', userId: '', appId: '' });
  const [filter, setFilter] = useState<Filter>(draft);
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const clients = useLoad(() => api<{ clients: ClientView[] }>('GET', '/admin/clients'), []);
  const names = new Map((clients.data?.clients ?? []).map((client) => [client.clientId, client.name]));
  const page = useLoad(
    () => api<Page>('GET', withQuery('/admin/connections', { ...filter, cursor, limit: 100 })),
    [filter.clientId, filter.userId, filter.appId, cursor],
  );

  return (
    <>
      <PageTitle title="Connections" />
      <p class="muted">
        Each end user's grants to oauth2 apps, per client. Disconnecting revokes the grant at the provider
        (when the app can) and forgets it; the agent then meets <code>auth_required</code> again.
      </p>
      <form
        class="inline-form card"
        onSubmit={(event) => {
          event.preventDefault();
          setCursors([]);
          setFilter({ ...draft, userId: draft.userId.trim(), appId: draft.appId.trim() });
        }}
      >
        <div class="field">
          <label for="connections-user">User id</label>
          <input
            id="connections-user"
            value={draft.userId}
            onInput={(event) => setDraft({ ...draft, userId: event.currentTarget.value })}
          />
        </div>
        <div class="field">
          <label for="connections-client">Client</label>
          <select
            id="connections-client"
            value={draft.clientId}
            onChange={(event) => setDraft({ ...draft, clientId: event.currentTarget.value })}
          >
            <option value="">every client</option>
            {(clients.data?.clients ?? []).map((client) => (
              <option key={client.clientId} value={client.clientId}>
                {client.name} ({client.clientId})
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="connections-app">App id</label>
          <input
            id="connections-app"
            value={draft.appId}
            onInput={(event) => setDraft({ ...draft, appId: event.currentTarget.value })}
          />
        </div>
        <button type="submit" class="primary">
          Show
        </button>
      </form>
      <ErrorNote error={page.error} />
      {page.data === undefined ? (
        page.loading ? (
          <Loading what="connections" />
        ) : null
      ) : page.data.connections.length === 0 ? (
        <p class="empty">
          No connection{filter.userId || filter.clientId || filter.appId ? ' matches' : ' yet'}.
        </p>
      ) : (
        <div class="table-wrap">
          <table>
            <caption class="sr-only">Connections by user</caption>
            <thead>
              <tr>
                <th scope="col">App</th>
                <th scope="col">Status</th>
                <th scope="col">Scopes</th>
                <th scope="col">Token expires</th>
                <th scope="col">Updated</th>
                <th scope="col">
                  <span class="sr-only">Disconnect</span>
                </th>
              </tr>
            </thead>
            {byUser(page.data.connections).map((group) => {
              const first = group[0] as AdminConnectionView;
              return (
                <tbody key={`${first.clientId} ${first.userId}`}>
                  <tr class="group">
                    <th scope="colgroup" colSpan={6}>
                      User <span class="mono">{first.userId}</span>{' '}
                      <span class="muted small">
                        of {names.get(first.clientId) ?? ''} <span class="mono">{first.clientId}</span>
                      </span>
                    </th>
                  </tr>
                  {group.map((connection) => (
                    <tr key={connection.appId}>
                      <th scope="row">
                        <a href={`/console/apps/${encodeURIComponent(connection.appId)}`}>
                          {connection.appId}
                        </a>
                      </th>
                      <td>
                        <span class={`chip ${connection.status === 'active' ? 'ok' : 'bad'}`}>
                          {connection.status}
                        </span>
                      </td>
                      <td class="mono small">{connection.scopes.join(' ')}</td>
                      <td>
                        <When at={connection.expiresAt} />
                      </td>
                      <td>
                        <When at={connection.updatedAt} />
                      </td>
                      <td>
                        <ConfirmButton
                          label="Disconnect"
                          confirm={`Disconnect ${connection.userId} from ${connection.appId}? The grant is revoked.`}
                          onConfirm={async () => {
                            await api(
                              'DELETE',
                              withQuery('/admin/connections', {
                                clientId: connection.clientId,
                                userId: connection.userId,
                                appId: connection.appId,
                              }),
                            );
                            page.reload();
                          }}
                        />
                      </td>
                    </tr>
                  ))}
                </tbody>
              );
            })}
          </table>
        </div>
      )}
      <div class="pager">
        <button
          type="button"
          disabled={cursors.length === 0}
          onClick={() => setCursors(cursors.slice(0, -1))}
        >
          Previous
        </button>
        <button
          type="button"
          disabled={!page.data?.next_cursor}
          onClick={() => page.data?.next_cursor && setCursors([...cursors, page.data.next_cursor])}
        >
          Next
        </button>
      </div>
    </>
  );
}
