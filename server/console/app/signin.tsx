import { useState } from 'preact/hooks';
import { ApiError, type Session, signIn } from './api.ts';
import { bound } from './ui.tsx';

/** Why a sign-in failed, in words a person acts on. */
function explain(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.status === 401) return 'That key was not accepted: it is unknown, mistyped or revoked.';
    if (error.status === 403)
      return 'That key is valid but lacks the admin scope: the console needs an admin key.';
    return error.describe();
  }
  return 'The server could not be reached.';
}

/**
 * The sign-in form. The key goes to the server once, in the body of POST /console/session, and the
 * field is emptied whatever the answer: from then on the browser holds only the HttpOnly cookie.
 */
export function SignIn({ onSignedIn, ended }: { onSignedIn: (session: Session) => void; ended: boolean }) {
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();

  return (
    <main class="signin">
      <form
        class="card signin-card"
        onSubmit={async (event) => {
          event.preventDefault();
          setBusy(true);
          setError(undefined);
          const typed = key.trim();
          setKey('');
          try {
            onSignedIn(await signIn(typed));
          } catch (failure) {
            setError(explain(failure));
          } finally {
            setBusy(false);
          }
        }}
      >
        <h1>toolgate console</h1>
        {ended && !error ? (
          <p class="note" role="status">
            Your session ended (signed out, expired, or its key was revoked). Sign in again.
          </p>
        ) : null}
        <label for="admin-key">Admin key</label>
        <input
          id="admin-key"
          name="admin-key"
          type="password"
          autocomplete="off"
          spellcheck={false}
          required
          {...bound(key, setKey)}
          aria-describedby="admin-key-help"
        />
        <p id="admin-key-help" class="muted small">
          An API key with the <code>admin</code> scope, such as the one the first start printed. It is
          exchanged for a session cookie and not kept by this page.
        </p>
        {error ? (
          <p class="note error" role="alert">
            {error}
          </p>
        ) : null}
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
