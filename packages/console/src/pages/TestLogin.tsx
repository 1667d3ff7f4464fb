/**
 * "Test a login", as the reference dashboard's Try does it: a login through the hosted page in a new tab, and a
 * console-owned callback that shows what came back. Ours tests this application itself (its client_id, its
 * connections, its login page), so the callback (/console/test-login.html) must be among its callback URLs:
 * the card says so and adds it only when asked. The callback page hands the answer to this tab (same origin,
 * BroadcastChannel). A public application's code is exchanged here with PKCE and the ID token's claims shown;
 * a confidential one's exchange needs its secret, which the console never keeps, so its test stops at the code.
 */
import { useEffect, useRef, useState } from 'react';
import { messageOf, type ManagementApi } from '../api.js';
import { TEST_LOGIN_CHANNEL, type TestLoginAnswer } from '../test-login-channel.js';
import { ErrorNotice, Notice } from '../ui.js';
import type { Application } from './Applications.js';

interface Pending {
  state: string;
  nonce: string;
  verifier: string;
}

const base64url = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
const random = () => base64url(crypto.getRandomValues(new Uint8Array(32)));

/** A JWT's payload, for display: it came straight from the token endpoint over this origin's connection. */
function claimsOf(jwt: string): Record<string, unknown> {
  const payload = jwt.split('.')[1] ?? '';
  const bytes = Uint8Array.from(atob(payload.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
  return JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;
}

export function TestLogin({ api, app, domain, onAllowed }: { api: ManagementApi; app: Application; domain: string; onAllowed: () => void }) {
  const callback = `${domain}/console/test-login.html`;
  const allowed = app.callbacks?.includes(callback) ?? false;
  const publicClient = app.token_endpoint_auth_method === 'none';
  const pending = useRef<Pending | undefined>(undefined);
  const [waiting, setWaiting] = useState(false);
  const [result, setResult] = useState<{ note: string; claims?: Record<string, unknown> }>();
  const [error, setError] = useState<string>();

  useEffect(() => {
    const receive = async (query: URLSearchParams) => {
      const sent = pending.current;
      // Another tab's test, or an old answer: not this one.
      if (!sent || query.get('state') !== sent.state) return;
      pending.current = undefined;
      setWaiting(false);
      const code = query.get('code');
      if (!code) return setError(`The login ended with ${query.get('error') ?? 'no code'}${query.get('error_description') ? `: ${query.get('error_description')}` : ''}`);
      if (!publicClient) {
        return setResult({
          note: 'The hosted page logged the user in and sent an authorization code back. Exchanging it needs the client secret, which the console does not keep, so the claims are not shown here: your back end sees them when it exchanges the code.',
        });
      }
      const response = await fetch(`${domain}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', client_id: app.client_id, code, redirect_uri: callback, code_verifier: sent.verifier }),
      });
      const body = (await response.json().catch(() => ({}))) as { id_token?: string; error?: string; error_description?: string };
      if (!response.ok || !body.id_token) return setError(body.error_description ?? body.error ?? `The token endpoint answered ${response.status}`);
      const claims = claimsOf(body.id_token);
      if (claims.nonce !== sent.nonce || ![claims.aud].flat().includes(app.client_id)) return setError('The ID token is not the one this test asked for: its nonce or audience differ.');
      setResult({ note: 'Logged in. The ID token this application gets, straight from the token endpoint:', claims });
    };
    const channel = new BroadcastChannel(TEST_LOGIN_CHANNEL);
    channel.onmessage = (event: MessageEvent<TestLoginAnswer>) => void receive(new URLSearchParams(event.data?.search ?? '')).catch((err: unknown) => setError(messageOf(err)));
    return () => channel.close();
  }, [app.client_id, callback, domain, publicClient]);

  const start = async () => {
    setError(undefined);
    setResult(undefined);
    const sent = { state: random(), nonce: random(), verifier: random() };
    const challenge = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(sent.verifier))));
    pending.current = sent;
    setWaiting(true);
    const query = new URLSearchParams({
      client_id: app.client_id,
      response_type: 'code',
      redirect_uri: callback,
      scope: 'openid profile email',
      state: sent.state,
      nonce: sent.nonce,
      // The login page every time, even where this browser has a session: what is tested is the login.
      prompt: 'login',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    window.open(`${domain}/authorize?${query}`, '_blank', 'noopener');
  };
  const allow = async () => {
    setError(undefined);
    try {
      await api.request('PATCH', `/clients/${encodeURIComponent(app.client_id)}`, { callbacks: [...(app.callbacks ?? []), callback] });
      onAllowed();
    } catch (err) {
      setError(messageOf(err));
    }
  };

  return (
    <section className="card" aria-labelledby="test-login">
      <h2 id="test-login">Test a login</h2>
      <p>
        Opens this application's login page in a new tab. Log in as a user of one of its connections; the result comes back here. That login becomes this browser's session at the tenant
        (the console keeps the tokens it holds).
      </p>
      {allowed ? (
        <button type="button" className="primary" onClick={() => void start()}>
          Test a login
        </button>
      ) : (
        <>
          <p>
            The test comes back to <code>{callback}</code>, which is not one of this application's callback URLs.
          </p>
          <button type="button" onClick={() => void allow()}>
            Allow the test callback
          </button>
        </>
      )}
      {waiting && <p className="muted">Waiting for the login in the other tab…</p>}
      <ErrorNotice message={error} />
      {result && (
        <>
          <Notice>{result.note}</Notice>
          {result.claims && (
            <pre tabIndex={0} aria-label="ID token claims">
              <code data-testid="test-claims">{JSON.stringify(result.claims, null, 2)}</code>
            </pre>
          )}
        </>
      )}
    </section>
  );
}
