// The console's frame: sign-in until a key is accepted, then a header with the pages and a hash
// router (`/console#/experiments/3`), so the server serves one file for every page and a reload
// keeps the page.
import { useEffect, useState } from 'preact/hooks';
import { Link, Redirect, Route, Router, Switch, useLocation } from 'wouter-preact';
import { useHashLocation } from 'wouter-preact/use-hash-location';
import { ErrorNotice } from './components/api-error.js';
import { EventsPage } from './pages/events.js';
import { ExperimentPage } from './pages/experiment.js';
import { ExperimentsPage } from './pages/experiments.js';
import { SignIn } from './pages/sign-in.js';
import { TelephonyPage } from './pages/telephony.js';
import { WebhooksPage } from './pages/webhooks.js';
import { forgetKey, rememberedKey, SessionContext, signIn, type Session } from './session.js';

const PAGES = [
  { path: '/experiments', label: 'Experiments' },
  { path: '/events', label: 'Events' },
  { path: '/telephony', label: 'Telephony' },
  { path: '/webhooks', label: 'Webhooks' },
];

export function App() {
  const [session, setSession] = useState<Session | null>(null);
  const [restoring, setRestoring] = useState(rememberedKey() !== null);
  const [restoreError, setRestoreError] = useState<unknown>();
  useEffect(() => {
    const key = rememberedKey();
    if (key === null) return;
    signIn(key)
      .then(setSession, (error: unknown) => {
        forgetKey();
        setRestoreError(error);
      })
      .finally(() => setRestoring(false));
  }, []);

  if (restoring) return <p class="loading">Signing in…</p>;
  if (!session) {
    return (
      <>
        <ErrorNotice error={restoreError} />
        <SignIn onSignedIn={setSession} />
      </>
    );
  }
  const signOut = () => {
    forgetKey();
    setSession(null);
  };
  return (
    <SessionContext.Provider value={session}>
      <Router hook={useHashLocation}>
        <header class="top">
          <span class="brand">Agentline</span>
          <nav aria-label="Pages">
            {PAGES.map((page) => (
              <PageLink key={page.path} path={page.path} label={page.label} />
            ))}
          </nav>
          <span class="who">
            {session.key.name} · {session.key.organization.name}
          </span>
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        </header>
        <main>
          <Switch>
            <Route path="/experiments/:id">
              {(params) => <ExperimentPage id={Number(params.id)} />}
            </Route>
            <Route path="/experiments" component={ExperimentsPage} />
            <Route path="/events" component={EventsPage} />
            <Route path="/telephony" component={TelephonyPage} />
            <Route path="/webhooks" component={WebhooksPage} />
            <Route>
              <Redirect to="/experiments" />
            </Route>
          </Switch>
        </main>
      </Router>
    </SessionContext.Provider>
  );
}

/** A page of the header, marked as the current one (for screen readers too) under its path. */
function PageLink({ path, label }: { path: string; label: string }) {
  const [location] = useLocation();
  const current = location === path || location.startsWith(`${path}/`);
  return (
    <Link
      href={path}
      class={current ? 'active' : undefined}
      aria-current={current ? 'page' : undefined}
    >
      {label}
    </Link>
  );
}
