/** The console's frame: a skip link, the navigation, and the page the hash route names. */
import { useMemo } from 'react';
import { ManagementApi } from './api.js';
import { signOut, type SignedIn } from './auth.js';
import type { ConsoleConfig } from './config.js';
import { ApplicationDetail } from './pages/ApplicationDetail.js';
import { Applications } from './pages/Applications.js';
import { ApiDetail, Apis } from './pages/Apis.js';
import { Deliveries } from './pages/Deliveries.js';
import { EventStreams, StreamDetail } from './pages/EventStreams.js';
import { Home } from './pages/Home.js';
import { NoAccess } from './pages/NoAccess.js';
import { UserDetail, Users } from './pages/Users.js';
import { href, useRoute } from './router.js';

const SECTIONS = [
  { path: '', label: 'Getting started' },
  { path: 'applications', label: 'Applications' },
  { path: 'apis', label: 'APIs' },
  { path: 'users', label: 'Users' },
  { path: 'event-streams', label: 'Event streams' },
];

export function App({ config, session }: { config: ConsoleConfig; session: SignedIn }) {
  const api = useMemo(() => new ManagementApi(session.client), [session.client]);
  const [section = '', id] = useRoute();
  if (session.permissions.length === 0) return <NoAccess who={session.who} onSignOut={() => void signOut(session.client)} />;

  let page;
  if (section === 'applications') page = id ? <ApplicationDetail api={api} id={id} domain={config.domain} /> : <Applications api={api} />;
  else if (section === 'apis') page = id ? <ApiDetail api={api} id={id} /> : <Apis api={api} />;
  else if (section === 'event-streams') page = id ? <StreamDetail api={api} id={id} /> : <EventStreams api={api} />;
  else if (section === 'users') page = id ? <UserDetail api={api} id={id} /> : <Users api={api} />;
  else if (section === 'deliveries') page = <Deliveries api={api} />;
  else page = <Home config={config} api={api} />;

  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <span className="brand">{config.tenantName} · Console</span>
        <nav aria-label="Sections">
          <ul>
            {SECTIONS.map((s) => (
              <li key={s.path}>
                <a href={href(...(s.path ? [s.path] : []))} aria-current={section === s.path || (s.path === 'event-streams' && section === 'deliveries') ? 'page' : undefined}>
                  {s.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <span className="who">
          {session.who}
          <button type="button" onClick={() => void signOut(session.client)}>
            Sign out
          </button>
        </span>
      </header>
      <main id="main" tabIndex={-1}>
        {page}
      </main>
    </>
  );
}
