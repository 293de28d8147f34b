import { useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import type { ApiKeyView, ClientView } from '../../../../shared/schemas/admin.ts';
import type { AppView } from '../../../../shared/schemas/apps.ts';
import { api, withQuery } from '../api.ts';
import { KEY_SCOPES } from '../scopes.ts';
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

/** One client: its redirect URIs and its API keys (created — shown once — and revoked). */
export function ClientDetailPage() {
  const { params } = useRoute();
  const clientId = params.clientId ?? '';
  const clients = useLoad(() => api<{ clients: ClientView[] }>('GET', '/admin/clients'), []);
  const client = clients.data?.clients.find((candidate) => candidate.clientId === clientId);

  return (
    <>
      <PageTitle title={client ? `Client ${client.name}` : 'Client'} />
      <p>
        <a href="/console/clients">← All clients</a>
      </p>
      <LoadedView loaded={clients} what="the client">
        {() =>
          client ? (
            <>
              <dl class="facts card">
                <dt>Client id</dt>
                <dd class="mono">{client.clientId}</dd>
                <dt>Created</dt>
                <dd>
                  <When at={client.createdAt} />
                </dd>
              </dl>
              <ApiKeys clientId={clientId} />
              <RedirectUris clientId={clientId} />
            </>
          ) : (
            <p class="note error">No client has the id {clientId}.</p>
          )
        }
      </LoadedView>
    </>
  );
}

function ApiKeys({ clientId }: { clientId: string }) {
  const base = `/admin/clients/${encodeURIComponent(clientId)}/api-keys`;
  const keys = useLoad(() => api<{ keys: ApiKeyView[] }>('GET', base), [base]);
  const apps = useLoad(() => api<{ apps: AppView[] }>('GET', '/admin/apps'), []);
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>(['tools:execute']);
  const [created, setCreated] = useState<{ keyId: string; apiKey: string } | null>(null);
  const [copied, setCopied] = useState(false);
  const [error, setError] = useState<unknown>();
  const toggle = (scope: string) =>
    setScopes(scopes.includes(scope) ? scopes.filter((s) => s !== scope) : [...scopes, scope]);
  const offered = [...KEY_SCOPES, ...(apps.data?.apps ?? []).map((app) => `tools:execute:${app.appId}`)];

  return (
    <section class="card" aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      {created ? (
        <div class="note success" role="status">
          <p>
            <strong>Copy this key now: it is shown this once.</strong> The server keeps only its hash.
          </p>
          <p class="row">
            <code class="secret" data-testid="new-api-key">
              {created.apiKey}
            </code>{' '}
            <button
              type="button"
              onClick={async () => {
                await navigator.clipboard.writeText(created.apiKey);
                setCopied(true);
              }}
            >
              {copied ? 'Copied' : 'Copy'}
            </button>{' '}
            <button type="button" onClick={() => setCreated(null)}>
              Done
            </button>
          </p>
        </div>
      ) : null}
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          setError(undefined);
          try {
            const answer = await api<{ keyId: string; apiKey: string }>('POST', base, {
              ...(name.trim() ? { name: name.trim() } : {}),
              scopes,
            });
            setCreated(answer);
            setCopied(false);
            setName('');
            keys.reload();
          } catch (failure) {
            setError(failure);
          }
        }}
      >
        <div class="inline-form">
          <div class="field">
            <label for="key-name">New key's name (optional)</label>
            <input id="key-name" {...bound(name, setName)} />
          </div>
          <button type="submit" class="primary" disabled={scopes.length === 0}>
            Create key
          </button>
        </div>
        <fieldset class="scopes">
          <legend>Scopes</legend>
          {offered.map((scope) => (
            <label key={scope} class="check">
              <input type="checkbox" checked={scopes.includes(scope)} onChange={() => toggle(scope)} />{' '}
              <code>{scope}</code>
            </label>
          ))}
        </fieldset>
      </form>
      <ErrorNote error={error} />
      <ErrorNote error={keys.error} />
      {keys.data ? (
        keys.data.keys.length === 0 ? (
          <p class="empty">This client has no key yet.</p>
        ) : (
          <ScrollRegion label="API keys">
            <Table
              class="keys"
              head={
                <>
                  <th scope="col">Key</th>
                  <th scope="col">Scopes</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">State</th>
                </>
              }
              items={keys.data.keys}
              row={(key) => (
                <tr key={key.keyId} class={key.revokedAt ? 'revoked' : undefined}>
                  <th scope="row">
                    {key.name ?? <span class="muted">unnamed</span>}
                    <div class="mono small muted">{key.keyId}</div>
                  </th>
                  <td class="mono small">{key.scopes.join(' ')}</td>
                  <td>
                    <When at={key.createdAt} />
                  </td>
                  <td>
                    <When at={key.lastUsedAt} />
                  </td>
                  <td>
                    {key.revokedAt ? (
                      <span>
                        revoked <When at={key.revokedAt} />
                      </span>
                    ) : (
                      <ConfirmButton
                        label="Revoke"
                        confirm={`Revoke the key ${key.name ?? key.keyId}? Every server refuses it within seconds.`}
                        onConfirm={async () => {
                          await api('DELETE', `/admin/api-keys/${encodeURIComponent(key.keyId)}`);
                          keys.reload();
                        }}
                      />
                    )}
                  </td>
                </tr>
              )}
            />
          </ScrollRegion>
        )
      ) : (
        <Loading what="keys" />
      )}
    </section>
  );
}

function RedirectUris({ clientId }: { clientId: string }) {
  const base = `/admin/clients/${encodeURIComponent(clientId)}/redirect-uris`;
  const uris = useLoad(() => api<{ uris: string[] }>('GET', base), [base]);
  const [uri, setUri] = useState('');
  const [error, setError] = useState<unknown>();

  return (
    <section class="card" aria-labelledby="uris-title">
      <h2 id="uris-title">Redirect URIs</h2>
      <p class="muted small">Where /initiateOAuth may send a user back after consenting (exact match).</p>
      <form
        class="inline-form"
        onSubmit={async (event) => {
          event.preventDefault();
          setError(undefined);
          try {
            await api('POST', base, { uri: uri.trim() });
            setUri('');
            uris.reload();
          } catch (failure) {
            setError(failure);
          }
        }}
      >
        <div class="field grow">
          <label for="redirect-uri">New redirect URI</label>
          <input
            id="redirect-uri"
            type="url"
            required
            placeholder="https://agent.example/oauth/done"
            {...bound(uri, setUri)}
          />
        </div>
        <button type="submit" class="primary">
          Add
        </button>
      </form>
      <ErrorNote error={error} />
      <ErrorNote error={uris.error} />
      {uris.data ? (
        uris.data.uris.length === 0 ? (
          <p class="empty">No redirect URI yet.</p>
        ) : (
          <ul class="plain uris">
            {uris.data.uris.map((registered) => (
              <li key={registered}>
                <span class="mono wrap">{registered}</span>{' '}
                <ConfirmButton
                  label="Remove"
                  confirm={`Remove ${registered}?`}
                  onConfirm={async () => {
                    await api('DELETE', withQuery(base, { uri: registered }));
                    uris.reload();
                  }}
                />
              </li>
            ))}
          </ul>
        )
      ) : (
        <Loading what="redirect URIs" />
      )}
    </section>
  );
}
