// The demo app: every operation of svc v10 against the server that serves this page. No framework, no build.
/* global svc */
'use strict';

const $ = (id) => document.getElementById(id);
const origin = window.location.origin;
const redirectUri = `${origin}/demo`;
const audience = `${origin}/api/v2/`;
const SCOPE = 'openid profile email read:current_user update:current_user_metadata update:current_user_identities';
let session = null;

function show(message, kind = 'info') {
  const status = $('status');
  status.textContent = message || '';
  status.dataset.kind = kind;
}

function describe(error) {
  if (!error) return '';
  const text = error.description || error.errorDescription || error.error_description || error.original || error.code || error.error;
  return typeof text === 'string' ? text : JSON.stringify(text);
}

function claimsOf(token) {
  try {
    const part = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    return JSON.parse(decodeURIComponent(escape(atob(part))));
  } catch {
    return null;
  }
}

async function start() {
  const config = await (await fetch('/demo/config.json')).json();
  const webAuth = new svc.WebAuth({ domain: origin, clientID: config.clientID, redirectUri, responseType: 'token id_token', scope: SCOPE, audience });

  const signedIn = (result) => {
    session = result;
    history.replaceState(null, '', '/demo');
    render(webAuth);
  };

  $('hosted-login').onclick = () => webAuth.authorize();
  $('hosted-signup').onclick = () => webAuth.authorize({ screen_hint: 'signup' });
  $('logout').onclick = () => webAuth.logout({ returnTo: redirectUri });

  $('embedded-login').onsubmit = (event) => {
    event.preventDefault();
    show('Logging in…');
    webAuth.login({ realm: config.databaseConnection, email: $('login-email').value, password: $('login-password').value }, (error) => show(describe(error), 'error'));
  };

  $('signup').onsubmit = (event) => {
    event.preventDefault();
    const email = $('signup-email').value;
    const password = $('signup-password').value;
    show('Creating the account…');
    webAuth.signup({ connection: config.databaseConnection, email, password }, (error) => {
      if (error) return show(error.policy ? `${describe(error)}\n${error.policy}` : describe(error), 'error');
      webAuth.login({ realm: config.databaseConnection, email, password }, (e) => show(describe(e), 'error'));
    });
  };

  $('passwordless-start').onsubmit = (event) => {
    event.preventDefault();
    show('Sending a code…');
    webAuth.passwordlessStart({ connection: config.passwordlessConnection, send: 'code', email: $('pwl-email').value }, (error) => {
      if (error) return show(describe(error), 'error');
      show('Code sent. Type it below.');
      $('passwordless-login').hidden = false;
      $('pwl-code').focus();
    });
  };
  $('passwordless-login').onsubmit = (event) => {
    event.preventDefault();
    webAuth.passwordlessLogin({ connection: config.passwordlessConnection, email: $('pwl-email').value, verificationCode: $('pwl-code').value }, (error) => show(describe(error), 'error'));
  };

  $('renew').onclick = () => {
    show('Renewing…');
    webAuth.checkSession({}, (error, result) => {
      if (error) return show(`checkSession: ${describe(error)}`, 'error');
      show('Renewed silently: new tokens from a hidden iframe, no page load.', 'ok');
      signedIn(result);
    });
  };

  $('userinfo').onclick = () =>
    webAuth.client.userInfo(session.accessToken, (error, user) => {
      if (error) return show(describe(error), 'error');
      $('userinfo-card').hidden = false;
      $('userinfo-json').textContent = JSON.stringify(user, null, 2);
    });

  $('metadata').onsubmit = (event) => {
    event.preventDefault();
    let value;
    try {
      value = JSON.parse($('metadata-json').value || '{}');
    } catch {
      return show('user_metadata must be a JSON object.', 'error');
    }
    management().patchUserMetadata(session.idTokenPayload.sub, value, (error, user) => {
      if (error) return show(describe(error), 'error');
      $('metadata-json').value = JSON.stringify(user.user_metadata, null, 2);
      show('Saved.', 'ok');
    });
  };

  $('link').onclick = () =>
    webAuth.popup.authorize({ prompt: 'login', scope: 'openid email' }, (error, second) => {
      if (error) return show(describe(error), 'error');
      management().linkUser(session.idTokenPayload.sub, second.idToken, (e) => {
        if (e) return show(describe(e), 'error');
        show(`Linked ${second.idTokenPayload.email}.`, 'ok');
        loadProfile();
      });
    });

  // In the popup opened by "Link another account": hand the result to the opener, which links it.
  if (window.opener && window.opener !== window && /id_token|error/.test(window.location.hash)) {
    webAuth.popup.callback();
    return;
  }
  // Back from /authorize with tokens in the fragment, or a page load: try the hash, then the session.
  if (/access_token|id_token|error/.test(window.location.hash)) {
    webAuth.parseHash((error, result) => {
      if (error) {
        history.replaceState(null, '', '/demo');
        show(describe(error), 'error');
        return render(webAuth);
      }
      signedIn(result);
    });
  } else {
    webAuth.checkSession({ timeout: 5000 }, (error, result) => (error ? render(webAuth) : signedIn(result)));
  }
}

function management() {
  return new svc.Management({ domain: origin, token: session.accessToken });
}

function loadProfile() {
  management().getUser(session.idTokenPayload.sub, (error, user) => {
    if (error) return show(describe(error), 'error');
    $('metadata-json').value = JSON.stringify(user.user_metadata || {}, null, 2);
    const list = $('identities');
    list.replaceChildren(
      ...(user.identities || []).map((identity) => {
        const item = document.createElement('li');
        item.textContent = `${identity.provider}|${identity.user_id}${identity.profileData && identity.profileData.email ? ` (${identity.profileData.email})` : ''}`;
        return item;
      }),
    );
  });
}

function render() {
  const inside = Boolean(session);
  $('signed-in').hidden = !inside;
  $('signed-out').hidden = inside;
  $('logout').hidden = !inside;
  $('who').hidden = !inside;
  if (!inside) return;
  const claims = session.idTokenPayload;
  $('who').textContent = claims.email || claims.name || claims.sub;
  $('hello').textContent = `Hello, ${claims.nickname || claims.name || claims.email}`;
  $('id-claims').textContent = JSON.stringify(claims, null, 2);
  $('access-claims').textContent = JSON.stringify(claimsOf(session.accessToken), null, 2);
  loadProfile();
}

window.addEventListener('DOMContentLoaded', () => start().catch((error) => show(String(error), 'error')));
