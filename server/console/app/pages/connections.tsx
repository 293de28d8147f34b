import type { AdminConnectionView, ClientView } from '../../../../shared/schemas/admin.ts';
import { api, withQuery } from '../api.ts';
import { FilterForm, PagedRows, Pager, usePagedList } from '../paged-list.tsx';
import { ConfirmButton, PageTitle, useLoad, When } from '../ui.tsx';

interface Page {
  connections: AdminConnectionView[];
  next_cursor?: string;
}

type Filter = Record<'userId' | 'clientId' | 'appId', string>;

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
  const clients = useLoad(() => api<{ clients: ClientView[] }>('GET', '/admin/clients'), []);
  const names = new Map((clients.data?.clients ?? []).map((client) => [client.clientId, client.name]));
  const list = usePagedList<Filter, Page>({ userId: '', clientId: '', appId: '' }, (filter, cursor) =>
    api<Page>('GET', withQuery('/admin/connections', { ...filter, cursor, limit: 100 })),
  );
  const { page } = list;

  return (
    <>
      <PageTitle title="Connections" />
      <p class="muted">
        Each end user's grants to oauth2 apps, per client. Disconnecting revokes the grant at the provider
        (when the app can) and forgets it; the agent then meets <code>auth_required</code> again.
      </p>
      <FilterForm
        list={list}
        idPrefix="connections"
        class="inline-form card"
        submit="Show"
        fields={[
          { name: 'userId', label: 'User id' },
          {
            name: 'clientId',
            label: 'Client',
            kind: 'select',
            any: 'every client',
            options: (clients.data?.clients ?? []).map((client) => ({
              value: client.clientId,
              label: `${client.name} (${client.clientId})`,
            })),
          },
          { name: 'appId', label: 'App id' },
        ]}
      />
      <PagedRows
        list={list}
        what="connections"
        label="Connections by user"
        none="No connection"
        isEmpty={(data) => data.connections.length === 0}
      >
        {(data) => (
          <table class="connections">
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
            {byUser(data.connections).map((group) => {
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
        )}
      </PagedRows>
      <Pager list={list} newer="Previous" older="Next" />
    </>
  );
}
