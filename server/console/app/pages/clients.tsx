import { useState } from 'preact/hooks';
import type { ClientView } from '../../../../shared/schemas/admin.ts';
import { api } from '../api.ts';
import { bound, ErrorNote, LoadedTable, PageTitle, useLoad, When } from '../ui.tsx';

/** Clients: the AI clients (agents' owners), and creating one. */
export function ClientsPage() {
  const clients = useLoad(() => api<{ clients: ClientView[] }>('GET', '/admin/clients'), []);
  const [name, setName] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  return (
    <>
      <PageTitle title="Clients" />
      <section class="card" aria-labelledby="new-client-title">
        <h2 id="new-client-title">New client</h2>
        <form
          class="inline-form"
          onSubmit={async (event) => {
            event.preventDefault();
            setBusy(true);
            setError(undefined);
            try {
              await api('POST', '/admin/clients', { name: name.trim() });
              setName('');
              clients.reload();
            } catch (failure) {
              setError(failure);
            } finally {
              setBusy(false);
            }
          }}
        >
          <div class="field">
            <label for="client-name">Name</label>
            <input
              id="client-name"
              required
              maxLength={200}
              placeholder="e.g. support agent"
              {...bound(name, setName)}
            />
          </div>
          <button type="submit" class="primary" disabled={busy}>
            Create client
          </button>
        </form>
        <ErrorNote error={error} />
      </section>
      <LoadedTable
        loaded={clients}
        what="clients"
        items={(data) => data.clients}
        empty="No client yet. An agent's API keys belong to a client."
        caption="Clients"
        head={
          <>
            <th scope="col">Name</th>
            <th scope="col">Client id (X-Service-Client-Id)</th>
            <th scope="col">Created</th>
          </>
        }
        row={(client) => (
          <tr key={client.clientId}>
            <th scope="row">
              <a href={`/console/clients/${encodeURIComponent(client.clientId)}`}>{client.name}</a>
            </th>
            <td class="mono">{client.clientId}</td>
            <td>
              <When at={client.createdAt} />
            </td>
          </tr>
        )}
      />
    </>
  );
}
