/** Getting started: what this tenant is and the values an application needs, pre-filled. */
import type { ConsoleConfig } from '../config.js';
import { href } from '../router.js';

export function Home({ config }: { config: ConsoleConfig }) {
  const snippet = `import { createAuth0Client } from '@auth0/auth0-spa-js';

const auth0 = await createAuth0Client({
  domain: '${config.domain}',
  clientId: '<your application's client id>',
  authorizationParams: { redirect_uri: window.location.origin },
});`;
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
        <h2 id="start">Sign users in to a single-page app</h2>
        <ol>
          <li>
            <a href={href('applications')}>Create an application</a> of type “Single-page application”.
          </li>
          <li>Add your app's address to its allowed callback URLs, logout URLs and web origins.</li>
          <li>Construct the client with its client id:</li>
        </ol>
        <pre tabIndex={0}>
          <code>{snippet}</code>
        </pre>
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
