/**
 * Getting started: what this tenant is, and quick-start code for the libraries people use with it, filled in
 * with this tenant's values and the application and API chosen here. Every option name is the library's own
 * (auth0-spa-js 2, auth0-js 10 and svc, express-openid-connect 2, express-oauth2-jwt-bearer 1).
 */
import { useState } from 'react';
import type { ManagementApi } from '../api.js';
import type { ConsoleConfig } from '../config.js';
import { href } from '../router.js';
import { ErrorNotice, useLoad } from '../ui.js';
import type { ResourceServer } from './Apis.js';
import type { Application } from './Applications.js';

const q = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

interface Values {
  domain: string;
  issuer: string;
  clientId: string;
  /** The application's first callback URL, if it has one. */
  callback?: string;
  /** Whether the application may get tokens in the redirect (the implicit grant), when known. */
  implicit?: boolean;
  audience?: string;
  scope?: string;
}

/** auth0-js and svc take a host name (https implied) or, with another scheme or a path, the URL and the issuer. */
function webAuthDomain(v: Values): { domain: string; issuerOverride?: string } {
  const url = new URL(v.domain);
  const plain = url.protocol === 'https:' && (url.pathname === '/' || url.pathname === '') && v.issuer === `https://${url.host}/`;
  return plain ? { domain: url.host } : { domain: v.domain, issuerOverride: v.issuer };
}

export function snippets(v: Values): { id: string; title: string; note?: string; code: string }[] {
  const redirect = v.callback ? q(v.callback) : 'window.location.origin';
  const audience = v.audience ? `\n    audience: ${q(v.audience)},` : '';
  const web = webAuthDomain(v);
  const webAudience = v.audience ? `\n  audience: ${q(v.audience)},` : '';
  const base = v.callback?.endsWith('/callback') ? v.callback.slice(0, -'/callback'.length) : undefined;
  // auth0-spa-js checks `iss` against `<domain>/`; a tenant with another issuer names it.
  const spaIssuer = v.issuer === `${v.domain.replace(/\/$/, '')}/` ? '' : `\n  issuer: ${q(v.issuer)},`;
  return [
    {
      id: 'auth0-spa-js',
      title: 'Single-page app: @auth0/auth0-spa-js',
      code: `import { createAuth0Client } from '@auth0/auth0-spa-js';

const auth0 = await createAuth0Client({
  domain: ${q(v.domain)},
  clientId: ${q(v.clientId)},${spaIssuer}
  authorizationParams: {
    redirect_uri: ${redirect},${audience}
  },
});`,
    },
    {
      id: 'auth0-js',
      title: 'Browser: auth0-js',
      note:
        v.implicit === false
          ? 'This application does not allow the Implicit grant yet: turn it on in its grant types, or the tokens in the redirect (responseType token id_token) are refused.'
          : 'Tokens in the redirect (responseType token id_token) need the Implicit grant type on the application.',
      code: `import auth0 from 'auth0-js';

const webAuth = new auth0.WebAuth({
  domain: ${q(web.domain)},
  clientID: ${q(v.clientId)},
  redirectUri: ${redirect},
  responseType: 'token id_token',
  scope: 'openid profile email',${webAudience}${web.issuerOverride ? `\n  overrides: { __token_issuer: ${q(web.issuerOverride)} },` : ''}
});
webAuth.authorize(); // on the callback page: webAuth.parseHash((err, result) => { ... })`,
    },
    {
      id: 'svc',
      title: 'Browser: svc (this server’s auth0-js v10 compatible library)',
      note: `Same options as auth0-js; svc takes the server’s URL as domain and expects its issuer as that URL plus /.${v.implicit === false ? ' Like auth0-js here, it needs the Implicit grant turned on first.' : ''}`,
      code: `<script src="${v.domain}/lib/svc.js"></script>
<script>
  const webAuth = new svc.WebAuth({
    domain: ${q(v.domain)},
    clientID: ${q(v.clientId)},
    redirectUri: ${redirect},
    responseType: 'token id_token',
    scope: 'openid profile email',${v.audience ? `\n    audience: ${q(v.audience)},` : ''}
  });
  webAuth.authorize(); // on the callback page: webAuth.parseHash((err, result) => { ... })
</script>`,
    },
    {
      id: 'express-openid-connect',
      title: 'Web app: express-openid-connect',
      note: 'A regular web application: its callback is baseURL + /callback; the secret is the application’s, shown once when it was made or rotated.',
      code: `const { auth, requiresAuth } = require('express-openid-connect');

app.use(
  auth({
    issuerBaseURL: ${q(v.domain)},
    baseURL: ${base ? q(base) : "'<your app’s URL>'"},
    clientID: ${q(v.clientId)},
    clientSecret: process.env.CLIENT_SECRET,
    secret: process.env.SESSION_SECRET, // a long random string for the session cookie
    authRequired: false,
    authorizationParams: {
      response_type: 'code',
      scope: 'openid profile email',${v.audience ? `\n      audience: ${q(v.audience)},` : ''}
    },
  }),
);
app.get('/profile', requiresAuth(), (req, res) => res.json(req.oidc.user));`,
    },
    {
      id: 'express-oauth2-jwt-bearer',
      title: 'API: express-oauth2-jwt-bearer',
      code: `const { auth, requiredScopes } = require('express-oauth2-jwt-bearer');

app.use(
  auth({
    issuerBaseURL: ${q(v.domain)},
    audience: ${v.audience ? q(v.audience) : "'<your API identifier>'"},
  }),
);
app.get('/api/things', requiredScopes(${q(v.scope ?? 'read:things')}), (req, res) => res.json({ sub: req.auth.payload.sub }));`,
    },
  ];
}

export function Home({ config, api }: { config: ConsoleConfig; api: ManagementApi }) {
  const apps = useLoad(() => api.page<Application>('/clients', 'clients', 0, 100, { fields: 'client_id,name,app_type,callbacks,grant_types', include_fields: 'true' }), []);
  const apis = useLoad(() => api.page<ResourceServer>('/resource-servers', 'resource_servers', 0, 100), []);
  const [appId, setAppId] = useState('');
  const [audience, setAudience] = useState('');
  const app = apps.data?.items.find((a) => a.client_id === appId) ?? apps.data?.items[0];
  const chosenApi = apis.data?.items.find((rs) => rs.identifier === audience);
  const values: Values = {
    domain: config.domain,
    issuer: config.issuer,
    clientId: app?.client_id ?? '<your application’s client id>',
    ...(app?.callbacks?.[0] && { callback: app.callbacks[0] }),
    ...(app?.grant_types && { implicit: app.grant_types.includes('implicit') }),
    ...(chosenApi && { audience: chosenApi.identifier }),
    ...(chosenApi?.scopes[0] && { scope: chosenApi.scopes[0].value }),
  };
  return (
    <>
      <h1>{config.tenantName}</h1>
      <p className="lead">Run this tenant: its applications, APIs, users and event streams, through the Management API.</p>
      <dl className="facts">
        <div>
          <dt>Domain</dt>
          <dd>
            <code>{config.domain}</code>
          </dd>
        </div>
        <div>
          <dt>Issuer</dt>
          <dd>
            <code>{config.issuer}</code>
          </dd>
        </div>
        <div>
          <dt>Management API</dt>
          <dd>
            <code>{config.audience}</code>
          </dd>
        </div>
      </dl>
      <section className="card" aria-labelledby="start">
        <h2 id="start">Quick start</h2>
        <p>
          <a href={href('applications')}>Create an application</a> (and an <a href={href('apis')}>API</a> if it calls one), add your app's address to its callback URLs, logout URLs and web origins, then
          pick them here: the code below is filled in for them.
        </p>
        <ErrorNotice message={apps.error ?? apis.error} />
        <div className="row by-label">
          <div className="field grow">
            <label htmlFor="start-app">Application</label>
            <select id="start-app" value={app?.client_id ?? ''} onChange={(e) => setAppId(e.target.value)}>
              {apps.data?.items.map((a) => (
                <option key={a.client_id} value={a.client_id}>
                  {a.name}
                </option>
              ))}
            </select>
          </div>
          <div className="field grow">
            <label htmlFor="start-api">API</label>
            <select id="start-api" value={audience} onChange={(e) => setAudience(e.target.value)}>
              <option value="">None (sign-in only)</option>
              {apis.data?.items
                .filter((rs) => !rs.is_system)
                .map((rs) => (
                  <option key={rs.id} value={rs.identifier}>
                    {rs.name}
                  </option>
                ))}
            </select>
          </div>
        </div>
        {snippets(values).map((s) => (
          <section key={s.id} aria-labelledby={`snippet-${s.id}`}>
            <h3 id={`snippet-${s.id}`}>{s.title}</h3>
            {s.note && <p className="muted small">{s.note}</p>}
            <pre tabIndex={0} aria-labelledby={`snippet-${s.id}`}>
              <code data-testid={`snippet-${s.id}`}>{s.code}</code>
            </pre>
          </section>
        ))}
      </section>
      <section className="card" aria-labelledby="start-m2m">
        <h2 id="start-m2m">Call an API from a service</h2>
        <ol>
          <li>
            <a href={href('apis')}>Create an API</a> with its identifier and scopes.
          </li>
          <li>
            <a href={href('applications')}>Create an application</a> of type “Machine to machine”.
          </li>
          <li>On its page, authorize it for the API; the page shows the curl that gets a token.</li>
        </ol>
      </section>
      <section className="card" aria-labelledby="start-events">
        <h2 id="start-events">Hear about changes</h2>
        <p>
          <a href={href('event-streams')}>Create an event stream</a> to your webhook, send it a test event, and watch its deliveries.
        </p>
      </section>
    </>
  );
}
