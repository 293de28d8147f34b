import { useState } from 'preact/hooks';
import type { AppView } from '../../../../shared/schemas/apps.ts';
import { api } from '../api.ts';
import { LoadedTable, PageTitle, useLoad, When } from '../ui.tsx';
import { RegisterApp } from './register-app.tsx';

/** Apps: every registered app, and registering one from its OpenAPI file. */
export function AppsPage() {
  const apps = useLoad(() => api<{ apps: AppView[] }>('GET', '/admin/apps'), []);
  const [registering, setRegistering] = useState(false);

  return (
    <>
      <PageTitle title="Apps">
        <button type="button" class="primary" onClick={() => setRegistering(!registering)}>
          {registering ? 'Close' : 'Register an app'}
        </button>
      </PageTitle>
      {registering ? <RegisterApp onRegistered={apps.reload} /> : null}
      <LoadedTable
        loaded={apps}
        what="apps"
        items={(data) => data.apps}
        empty="No app is registered yet. Register one from its OpenAPI document."
        caption="Registered apps"
        head={
          <>
            <th scope="col">App</th>
            <th scope="col">Provider</th>
            <th scope="col">Base URL</th>
            <th scope="col">Auth</th>
            <th scope="col" class="num">
              Tools
            </th>
            <th scope="col" class="num">
              Skipped
            </th>
            <th scope="col">Updated</th>
          </>
        }
        row={(app) => (
          <tr key={app.appId}>
            <th scope="row">
              <a href={`/console/apps/${encodeURIComponent(app.appId)}`}>{app.appId}</a>
            </th>
            <td>{app.provider}</td>
            <td class="mono wrap">{app.baseUrl}</td>
            <td>{app.auth.type}</td>
            <td class="num">{app.tools.length}</td>
            <td class="num">{app.skipped.length}</td>
            <td>
              <When at={app.updatedAt} />
            </td>
          </tr>
        )}
      />
    </>
  );
}
