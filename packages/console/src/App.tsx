/** The console's frame: a skip link, the navigation, and the page the hash route names. */
import { lazy, useMemo } from 'react';
import { ManagementApi } from './api.js';
import { signOut, type SignedIn } from './auth.js';
import { PageBoundary } from './components/PageBoundary.js';
import type { ConsoleConfig } from './config.js';
import { Home } from './pages/Home.js';
import { NoAccess } from './pages/NoAccess.js';
import { href, useRoute } from './router.js';

// Every page but the home page is its own chunk, loaded when first visited (the bundle budget: README).
const ApplicationDetail = lazy(() => import('./pages/ApplicationDetail.js').then((m) => ({ default: m.ApplicationDetail })));
const Applications = lazy(() => import('./pages/Applications.js').then((m) => ({ default: m.Applications })));
const ApiDetail = lazy(() => import('./pages/Apis.js').then((m) => ({ default: m.ApiDetail })));
const Apis = lazy(() => import('./pages/Apis.js').then((m) => ({ default: m.Apis })));
const Deliveries = lazy(() => import('./pages/Deliveries.js').then((m) => ({ default: m.Deliveries })));
const EventStreams = lazy(() => import('./pages/EventStreams.js').then((m) => ({ default: m.EventStreams })));
const StreamDetail = lazy(() => import('./pages/EventStreams.js').then((m) => ({ default: m.StreamDetail })));
const UserDetail = lazy(() => import('./pages/Users.js').then((m) => ({ default: m.UserDetail })));
const Users = lazy(() => import('./pages/Users.js').then((m) => ({ default: m.Users })));
const Connections = lazy(() => import('./pages/Connections.js').then((m) => ({ default: m.Connections })));
const ConnectionDetail = lazy(() => import('./pages/Connections.js').then((m) => ({ default: m.ConnectionDetail })));
const Organizations = lazy(() => import('./pages/Organizations.js').then((m) => ({ default: m.Organizations })));
const OrganizationDetail = lazy(() => import('./pages/Organizations.js').then((m) => ({ default: m.OrganizationDetail })));
const Roles = lazy(() => import('./pages/Roles.js').then((m) => ({ default: m.Roles })));
const RoleDetail = lazy(() => import('./pages/Roles.js').then((m) => ({ default: m.RoleDetail })));
const AttackProtection = lazy(() => import('./pages/AttackProtection.js').then((m) => ({ default: m.AttackProtection })));
const Branding = lazy(() => import('./pages/Branding.js').then((m) => ({ default: m.Branding })));
const TenantSettings = lazy(() => import('./pages/TenantSettings.js').then((m) => ({ default: m.TenantSettings })));

const SECTIONS = [
  { path: '', label: 'Getting started' },
  { path: 'applications', label: 'Applications' },
  { path: 'apis', label: 'APIs' },
  { path: 'users', label: 'Users' },
  { path: 'event-streams', label: 'Event streams' },
  { path: 'connections', label: 'Connections' },
  { path: 'organizations', label: 'Organizations' },
  { path: 'roles', label: 'Roles' },
  { path: 'attack-protection', label: 'Attack protection' },
  { path: 'branding', label: 'Branding' },
  { path: 'settings', label: 'Settings' },
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
  else if (section === 'connections') page = id ? <ConnectionDetail api={api} id={id} /> : <Connections api={api} />;
  else if (section === 'organizations') page = id ? <OrganizationDetail api={api} id={id} /> : <Organizations api={api} />;
  else if (section === 'roles') page = id ? <RoleDetail api={api} id={id} /> : <Roles api={api} />;
  else if (section === 'attack-protection') page = <AttackProtection api={api} />;
  else if (section === 'branding') page = <Branding api={api} tenantName={config.tenantName} />;
  else if (section === 'settings') page = <TenantSettings api={api} />;
  else page = <Home config={config} />;

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
        <PageBoundary route={`${section}/${id ?? ''}`}>{page}</PageBoundary>
      </main>
    </>
  );
}
