import { useCallback, useEffect, useState } from 'react';
import { ApiError, get, type SessionInfo, setCsrfToken } from './api.js';
import { ApprovalDetailView } from './approval-detail.js';
import { ApprovalList } from './approval-list.js';
import { enrol, signIn } from './passkey.js';
import { useLiveEvents } from './use-live-events.js';

type Route = { view: 'list' } | { view: 'detail'; id: string } | { view: 'enrol'; token: string };

function routeOf(hash: string): Route {
  const enrolment = /^#\/enrol\/([A-Za-z0-9_-]{43})$/.exec(hash);
  if (enrolment) return { view: 'enrol', token: enrolment[1]! };
  const detail = /^#\/approvals\/([A-Za-z0-9_-]{1,200})$/.exec(hash);
  if (detail) return { view: 'detail', id: detail[1]! };
  return { view: 'list' };
}

/** The inbox: sign-in or enrolment, the pending list, one request in detail. */
export function App() {
  const [route, setRoute] = useState<Route>(() => routeOf(location.hash));
  const [session, setSession] = useState<SessionInfo | null | undefined>(undefined);
  const [message, setMessage] = useState('');
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    const onHash = () => setRoute(routeOf(location.hash));
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);

  const loadSession = useCallback(async () => {
    try {
      const info = await get<SessionInfo>('/api/session');
      setCsrfToken(info.csrfToken);
      setSession(info);
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) setSession(null);
      else setMessage((error as Error).message);
    }
  }, []);
  useEffect(() => {
    void loadSession();
  }, [loadSession]);

  const version = useLiveEvents(Boolean(session));

  const run = async (action: () => Promise<unknown>) => {
    setBusy(true);
    setMessage('');
    try {
      await action();
      await loadSession();
    } catch (error) {
      setMessage((error as Error).message);
    } finally {
      setBusy(false);
    }
  };

  if (route.view === 'enrol') {
    return (
      <main className="narrow">
        <h1>Enrol as an approver</h1>
        <p>This one-time link registers a passkey on this device as your approver key.</p>
        <button
          type="button"
          className="primary"
          disabled={busy}
          onClick={() =>
            run(async () => {
              await enrol(route.token);
              location.hash = '#/';
            })
          }
        >
          Create passkey
        </button>
        <p role="status" aria-live="polite" className="message">
          {message}
        </p>
      </main>
    );
  }
  if (session === undefined) return <main className="narrow">Loading…</main>;
  if (session === null) {
    return (
      <main className="narrow">
        <h1>Approvals inbox</h1>
        <p>Sign in with your passkey to see what waits for your decision.</p>
        <button type="button" className="primary" disabled={busy} onClick={() => run(signIn)}>
          Sign in with passkey
        </button>
        <p role="status" aria-live="polite" className="message">
          {message}
        </p>
      </main>
    );
  }
  return (
    <>
      <header>
        <a href="#/" className="brand">
          Approvals
        </a>
        <span className="who" data-testid="signed-in-as">
          {session.approver.displayName} · {session.approver.id}
        </span>
      </header>
      <main>
        {route.view === 'detail' ? (
          <ApprovalDetailView id={route.id} version={version} />
        ) : (
          <ApprovalList version={version} />
        )}
        <p role="status" aria-live="polite" className="message">
          {message}
        </p>
      </main>
    </>
  );
}
