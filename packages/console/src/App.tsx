/** The console's frame: a skip link, the navigation, and the page the hash route names. */
import { useEffect, useMemo } from 'react';
import { ManagementApi } from './api.js';
import { signOut, type SignedIn } from './auth.js';
import { lazyPage } from './components/lazyPage.js';
import { PageBoundary } from './components/PageBoundary.js';
import { SectionsNav } from './components/SectionsNav.js';
import type { ConsoleConfig } from './config.js';
import { Home } from './pages/Home.js';
import { NoAccess } from './pages/NoAccess.js';
import { useRoute } from './router.js';

// Every page but the home page is its own chunk (the bundle budget: README), preloaded once the console is up.
const ApplicationDetail = lazyPage(() => import('./pages/ApplicationDetail.js').then((m) => m.ApplicationDetail));
const Applications = lazyPage(() => import('./pages/Applications.js').then((m) => m.Applications));
const ApiDetail = lazyPage(() => import('./pages/Apis.js').then((m) => m.ApiDetail));
const Apis = lazyPage(() => import('./pages/Apis.js').then((m) => m.Apis));
const Deliveries = lazyPage(() => import('./pages/Deliveries.js').then((m) => m.Deliveries));
const EventStreams = lazyPage(() => import('./pages/EventStreams.js').then((m) => m.EventStreams));
const StreamDetail = lazyPage(() => import('./pages/EventStreams.js').then((m) => m.StreamDetail));
const UserDetail = lazyPage(() => import('./pages/Users.js').then((m) => m.UserDetail));
const Users = lazyPage(() => import('./pages/Users.js').then((m) => m.Users));
const Connections = lazyPage(() => import('./pages/Connections.js').then((m) => m.Connections));
const ConnectionDetail = lazyPage(() => import('./pages/Connections.js').then((m) => m.ConnectionDetail));
const Organizations = lazyPage(() => import('./pages/Organizations.js').then((m) => m.Organizations));
const OrganizationDetail = lazyPage(() => import('./pages/Organizations.js').then((m) => m.OrganizationDetail));
const Roles = lazyPage(() => import('./pages/Roles.js').then((m) => m.Roles));
const RoleDetail = lazyPage(() => import('./pages/Roles.js').then((m) => m.RoleDetail));
const AttackProtection = lazyPage(() => import('./pages/AttackProtection.js').then((m) => m.AttackProtection));
const Branding = lazyPage(() => import('./pages/Branding.js').then((m) => m.Branding));
const TenantSettings = lazyPage(() => import('./pages/TenantSettings.js').then((m) => m.TenantSettings));

const PAGES = [ApplicationDetail, Applications, ApiDetail, Apis, Deliveries, EventStreams, StreamDetail, UserDetail, Users, Connections, ConnectionDetail, Organizations, OrganizationDetail, Roles, RoleDetail, AttackProtection, Branding, TenantSettings];

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
  useEffect(() => {
    // After the first page is shown, not before: the initial load stays within its budget. A page that fails
    // to load here says so when it is shown (PageBoundary).
    if (session.permissions.length === 0) return;
    const timer = setTimeout(() => PAGES.forEach((page) => void page.preload().catch(() => undefined)), 0);
    return () => clearTimeout(timer);
  }, [session.permissions.length]);
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
  else page = <Home config={config} api={api} />;

  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <span className="brand">{config.tenantName} · Console</span>
        <SectionsNav sections={SECTIONS} current={(path) => section === path || (path === 'event-streams' && section === 'deliveries')} />
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
