import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { LocationProvider, Route, Router, useLocation } from 'preact-iso';
import { currentSession, onSessionEnded, type Session, signOut } from './api.ts';
import { AppDetailPage } from './pages/app-detail.tsx';
import { AppsPage } from './pages/apps.tsx';
import { ClientDetailPage } from './pages/client-detail.tsx';
import { ClientsPage } from './pages/clients.tsx';
import { ConnectionsPage } from './pages/connections.tsx';
import { SignIn } from './signin.tsx';
import { describeError, PageTitle } from './ui.tsx';
import './styles.css';

/**
 * The web console (docs/reference.md "Console"): Preact, routed by preact-iso under /console, built
 * by scripts/build.mjs into dist/console and served by the server with a strict CSP.
 */

const NAV = [
  { href: '/console/apps', label: 'Apps' },
  { href: '/console/clients', label: 'Clients' },
  { href: '/console/connections', label: 'Connections' },
] as const;

function Nav() {
  const { path } = useLocation();
  return (
    <nav aria-label="Console">
      <ul>
        {NAV.map((item) => (
          <li key={item.href}>
            <a
              href={item.href}
              aria-current={path === item.href || path.startsWith(`${item.href}/`) ? 'page' : undefined}
            >
              {item.label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

function NotFound() {
  return (
    <>
      <PageTitle title="Not found" />
      <p>
        This page does not exist. <a href="/console">Back to the console</a>.
      </p>
    </>
  );
}

function Home() {
  const { route } = useLocation();
  useEffect(() => route('/console/apps', true), [route]);
  return null;
}

function Shell({ session, onSignOut }: { session: Session; onSignOut: () => void }) {
  const [error, setError] = useState<unknown>();
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="/console">
          toolgate <span>console</span>
        </a>
        <Nav />
        <div class="who">
          <span class="muted small" title="The admin key this session was opened with">
            {session.keyId ?? 'TOOLGATE_ADMIN_KEY'}
          </span>
          <button
            type="button"
            onClick={async () => {
              try {
                await signOut();
                onSignOut();
              } catch (failure) {
                setError(failure);
              }
            }}
          >
            Sign out
          </button>
        </div>
      </header>
      {error ? <p class="note error">{describeError(error)}</p> : null}
      <main id="main" tabIndex={-1}>
        <Router>
          <Route path="/console" component={Home} />
          <Route path="/console/apps" component={AppsPage} />
          <Route path="/console/apps/:appId" component={AppDetailPage} />
          <Route path="/console/clients" component={ClientsPage} />
          <Route path="/console/clients/:clientId" component={ClientDetailPage} />
          <Route path="/console/connections" component={ConnectionsPage} />
          <Route default component={NotFound} />
        </Router>
      </main>
    </div>
  );
}

function Console() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [ended, setEnded] = useState(false);
  const [error, setError] = useState<unknown>();

  useEffect(() => {
    currentSession().then(setSession, setError);
    return onSessionEnded(() => {
      setEnded(true);
      setSession(null);
    });
  }, []);

  if (error) return <p class="note error">{describeError(error)}</p>;
  if (session === undefined) return <p class="muted">Loading…</p>;
  if (session === null)
    return (
      <SignIn
        ended={ended}
        onSignedIn={(opened) => {
          setEnded(false);
          setSession(opened);
        }}
      />
    );
  return <Shell session={session} onSignOut={() => setSession(null)} />;
}

render(
  <LocationProvider scope="/console">
    <Console />
  </LocationProvider>,
  document.getElementById('root') as HTMLElement,
);
