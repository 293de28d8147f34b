import { useState } from 'preact/hooks';
import type { SkippedOperationView } from '../../../../shared/schemas/apps.ts';
import { putWithProgress } from '../api.ts';
import { bound, ErrorNote } from '../ui.tsx';

/**
 * Registers an app from an OpenAPI (3.0, 3.1) or Swagger 2.0 file, JSON or YAML, with PUT
 * /admin/apps/{appId}. The file's text is sent as it is (the server parses it off its event loop);
 * the form shows the upload's progress, then the compile, then what became tools and what was
 * skipped and why.
 */

type AuthType = 'none' | 'api_key' | 'oauth2';

type Phase =
  | { kind: 'idle' }
  | { kind: 'uploading'; sent: number; total: number }
  | { kind: 'compiling' }
  | { kind: 'done'; appId: string; tools: string[]; skipped: SkippedOperationView[] };

interface Registered {
  appId: string;
  tools: string[];
  skipped: SkippedOperationView[];
}

/** An app id from a file name: `github-api.yaml` → `github-api`, within the id pattern. */
function idFromFileName(name: string): string {
  return name
    .replace(/\.(json|ya?ml)$/i, '')
    .replace(/[^A-Za-z0-9_.-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 128);
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(bytes < 10_240 ? 1 : 0)} KiB`;

export function RegisterApp({ onRegistered }: { onRegistered: () => void }) {
  const [file, setFile] = useState<File | null>(null);
  const [appId, setAppId] = useState('');
  const [provider, setProvider] = useState('');
  const [baseUrl, setBaseUrl] = useState('');
  const [authType, setAuthType] = useState<AuthType>('none');
  const [auth, setAuth] = useState<Record<string, string>>({});
  const [phase, setPhase] = useState<Phase>({ kind: 'idle' });
  const [error, setError] = useState<unknown>();
  const field = (name: string) => ({
    value: auth[name] ?? '',
    onInput: (event: Event) => setAuth({ ...auth, [name]: (event.currentTarget as HTMLInputElement).value }),
  });

  function authBody(): Record<string, unknown> {
    if (authType === 'api_key')
      return { type: 'api_key', in: auth.in ?? 'header', name: auth.name, value: auth.value };
    if (authType === 'oauth2') {
      return {
        type: 'oauth2',
        authorizationUrl: auth.authorizationUrl,
        tokenUrl: auth.tokenUrl,
        ...(auth.revocationUrl ? { revocationUrl: auth.revocationUrl } : {}),
        clientId: auth.clientId,
        clientSecret: auth.clientSecret,
        scopes: (auth.scopes ?? '').split(/[\s,]+/).filter(Boolean),
      };
    }
    return { type: 'none' };
  }

  async function submit(event: Event) {
    event.preventDefault();
    if (!file) return;
    setError(undefined);
    setPhase({ kind: 'uploading', sent: 0, total: file.size });
    try {
      const openapi = await file.text();
      const body = { provider, ...(baseUrl ? { baseUrl } : {}), openapi, auth: authBody() };
      const answer = await putWithProgress<Registered>(
        `/admin/apps/${encodeURIComponent(appId)}`,
        body,
        (sent, total) => setPhase(sent < total ? { kind: 'uploading', sent, total } : { kind: 'compiling' }),
      );
      setPhase({ kind: 'done', ...answer });
      setAuth({});
      onRegistered();
    } catch (failure) {
      setPhase({ kind: 'idle' });
      setError(failure);
    }
  }

  const busy = phase.kind === 'uploading' || phase.kind === 'compiling';
  return (
    <section class="card" aria-labelledby="register-title">
      <h2 id="register-title">Register an app from its OpenAPI file</h2>
      <form onSubmit={submit} class="grid-form">
        <label for="app-file">OpenAPI or Swagger 2.0 file (JSON or YAML)</label>
        <input
          id="app-file"
          type="file"
          accept=".json,.yaml,.yml,application/json,application/yaml"
          required
          onChange={(event) => {
            const chosen = event.currentTarget.files?.[0] ?? null;
            setFile(chosen);
            if (chosen && !appId) setAppId(idFromFileName(chosen.name));
          }}
        />
        <label for="app-id">App id</label>
        <input id="app-id" required pattern="[A-Za-z0-9][A-Za-z0-9_.\-]{0,127}" {...bound(appId, setAppId)} />
        <label for="app-provider">Provider</label>
        <input
          id="app-provider"
          required
          placeholder="vendor.product, e.g. github.rest"
          {...bound(provider, setProvider)}
        />
        <label for="app-base-url">Base URL (optional)</label>
        <input
          id="app-base-url"
          type="url"
          placeholder="else the document's servers[0].url"
          {...bound(baseUrl, setBaseUrl)}
        />
        <label for="app-auth">Upstream authorization</label>
        <select
          id="app-auth"
          value={authType}
          onChange={(event) => setAuthType(event.currentTarget.value as AuthType)}
        >
          <option value="none">none</option>
          <option value="api_key">API key (the app's own)</option>
          <option value="oauth2">OAuth 2 (per end user)</option>
        </select>
        {authType === 'api_key' ? (
          <>
            <label for="auth-in">Key sent in</label>
            <select id="auth-in" {...field('in')}>
              <option value="header">header</option>
              <option value="query">query</option>
            </select>
            <label for="auth-name">Header or query name</label>
            <input id="auth-name" required placeholder="X-Api-Key" {...field('name')} />
            <label for="auth-value">Key value</label>
            <input id="auth-value" type="password" autocomplete="off" required {...field('value')} />
          </>
        ) : null}
        {authType === 'oauth2' ? (
          <>
            <label for="auth-authorization-url">Authorization URL</label>
            <input id="auth-authorization-url" type="url" required {...field('authorizationUrl')} />
            <label for="auth-token-url">Token URL</label>
            <input id="auth-token-url" type="url" required {...field('tokenUrl')} />
            <label for="auth-revocation-url">Revocation URL (optional)</label>
            <input id="auth-revocation-url" type="url" {...field('revocationUrl')} />
            <label for="auth-client-id">Client id</label>
            <input id="auth-client-id" required {...field('clientId')} />
            <label for="auth-client-secret">Client secret</label>
            <input
              id="auth-client-secret"
              type="password"
              autocomplete="off"
              required
              {...field('clientSecret')}
            />
            <label for="auth-scopes">Scopes (space-separated)</label>
            <input id="auth-scopes" {...field('scopes')} />
          </>
        ) : null}
        <div class="form-actions">
          <button type="submit" class="primary" disabled={busy || !file}>
            {busy ? 'Registering…' : 'Register'}
          </button>
        </div>
      </form>
      <Progress phase={phase} />
      <ErrorNote error={error} />
    </section>
  );
}

function Progress({ phase }: { phase: Phase }) {
  if (phase.kind === 'idle') return null;
  if (phase.kind === 'uploading')
    return (
      <div class="progress" role="status">
        <label for="register-progress">
          Uploading {kib(phase.sent)} of {kib(phase.total)}
        </label>
        <progress id="register-progress" max={phase.total || 1} value={phase.sent} />
      </div>
    );
  if (phase.kind === 'compiling')
    return (
      <div class="progress" role="status">
        <label for="register-progress">
          Uploaded; the server is reading the document and compiling its tools…
        </label>
        <progress id="register-progress" />
      </div>
    );
  return (
    <div class="note success" role="status">
      <p>
        Registered <a href={`/console/apps/${encodeURIComponent(phase.appId)}`}>{phase.appId}</a>:{' '}
        {phase.tools.length} tools
        {phase.skipped.length > 0 ? `, ${phase.skipped.length} operations skipped` : ', nothing skipped'}.
      </p>
      {phase.skipped.length > 0 ? (
        <ul class="small">
          {phase.skipped.slice(0, 20).map((operation) => (
            <li key={`${operation.method} ${operation.path}`}>
              <code>
                {operation.method.toUpperCase()} {operation.path}
              </code>
              : {operation.reason}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
