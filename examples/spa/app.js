// The demo app: every operation of svc v10 against the server that serves this page. No framework, no build.
/* global svc */
'use strict';

const $ = (id) => document.getElementById(id);
const origin = window.location.origin;
const redirectUri = `${origin}/demo`;
const audience = `${origin}/api/v2/`;
const SCOPE = 'openid profile email read:current_user update:current_user_metadata update:current_user_identities';
let session = null;

/** Shows a message in the status line; `details` (a list of password rules) goes under it. */
function show(message, kind = 'info', details = null) {
  const status = $('status');
  status.replaceChildren(document.createTextNode(message || ''), ...(details ? [details] : []));
  status.dataset.kind = kind;
}

/** The server's own words for an error, whatever field they came in. */
function serverText(error) {
  const text = error.description || error.errorDescription || error.error_description || error.code || error.error;
  return typeof text === 'string' ? text : '';
}

/** A password rule of the reference's PasswordStrengthError in words: `%d` filled from `format`. */
function ruleText(rule) {
  const values = [...(rule.format || [])];
  return String(rule.message || rule.code).replace(/%d/g, () => String(values.shift()));
}

/** The policy's rules as a list, each marked met or still needed (in words too, for screen readers). */
function ruleList(rules) {
  const list = document.createElement('ul');
  list.className = 'rules';
  for (const rule of rules) {
    const item = document.createElement('li');
    item.className = rule.verified ? 'met' : 'unmet';
    const said = document.createElement('span');
    said.className = 'visually-hidden';
    said.textContent = rule.verified ? 'Done: ' : 'Still needed: ';
    item.append(said, ruleText(rule));
    if (rule.items && rule.items.length) item.append(ruleList(rule.items));
    list.append(item);
  }
  return list;
}

/**
 * An error as a sentence that says what to do next, by its code (the server's descriptions are the reference
 * service's exact words, kept for SDKs; the advice is added here). Unknown errors keep the server's words.
 */
function explain(error) {
  if (!error) return { message: '' };
  const code = error.code || error.error;
  const text = serverText(error);
  if (code === 'invalid_password' && error.description && Array.isArray(error.description.rules)) {
    return { message: 'Choose a stronger password. It must have:', details: ruleList(error.description.rules) };
  }
  switch (code) {
    case 'password_dictionary_error':
      return { message: 'This password is too common. Choose one that is harder to guess.' };
    case 'password_no_user_info_error':
      return { message: 'This password contains your email address or name. Choose one without them.' };
    case 'password_leaked':
      return { message: 'This password has appeared in a data breach elsewhere. Choose a different one (to change an existing password, use “Forgot password?” on the hosted login page).' };
    case 'user_exists':
    case 'username_exists':
      return { message: 'An account with this email already exists. Log in with it instead (embedded login, or the hosted page).' };
    case 'invalid_signup':
      return { message: `${text} Check the email address and try again.` };
    case 'too_many_attempts':
      return { message: `${text} Wait before trying again; the emailed link (see the dev mailbox) unblocks the account.` };
    case 'blocked_user':
      return { message: 'This account is blocked. An administrator can unblock it (PATCH /api/v2/users/{id} with "blocked": false).' };
    case 'login_required':
      return { message: 'You are not logged in any more. Log in again.' };
    case 'timeout':
      return { message: 'The server did not answer in time. Check that it is running, then try again.' };
    case 'request_error':
      return { message: 'Could not reach the server. Check that it is running (npm start), then try again.' };
  }
  if (/verification code/i.test(text)) return { message: 'That code is wrong or has expired. Type the code from the latest email (see the dev mailbox), or send a new one.' };
  if (/wrong email or password/i.test(text)) return { message: 'Wrong email or password. Check both and try again, or sign up or reset the password on the hosted page.' };
  if (/insufficient scope|expired|invalid token/i.test(text)) return { message: `${text} Log out and log in again for a fresh token.` };
  return { message: `${text || 'Something went wrong.'} Try again; if it keeps failing, the server's log says why.` };
}

function showError(error, prefix = '') {
  const { message, details } = explain(error);
  show(`${prefix}${message}`, 'error', details);
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
    webAuth.login({ realm: config.databaseConnection, email: $('login-email').value, password: $('login-password').value }, (error) => showError(error));
  };

  $('signup').onsubmit = (event) => {
    event.preventDefault();
    const email = $('signup-email').value;
    const password = $('signup-password').value;
    show('Creating the account…');
    webAuth.signup({ connection: config.databaseConnection, email, password }, (error) => {
      if (error) return showError(error);
      webAuth.login({ realm: config.databaseConnection, email, password }, (e) => showError(e));
    });
  };

  $('passwordless-start').onsubmit = (event) => {
    event.preventDefault();
    show('Sending a code…');
    webAuth.passwordlessStart({ connection: config.passwordlessConnection, send: 'code', email: $('pwl-email').value }, (error) => {
      if (error) return showError(error);
      show('Code sent. Type it below.');
      $('passwordless-login').hidden = false;
      $('pwl-code').focus();
    });
  };
  $('passwordless-login').onsubmit = (event) => {
    event.preventDefault();
    webAuth.passwordlessLogin({ connection: config.passwordlessConnection, email: $('pwl-email').value, verificationCode: $('pwl-code').value }, (error) => showError(error));
  };

  $('renew').onclick = () => {
    show('Renewing…');
    webAuth.checkSession({}, (error, result) => {
      if (error) return showError(error, 'Silent renewal failed. ');
      show('Renewed silently: new tokens from a hidden iframe, no page load.', 'ok');
      signedIn(result);
    });
  };

  $('userinfo').onclick = () =>
    webAuth.client.userInfo(session.accessToken, (error, user) => {
      if (error) return showError(error);
      $('userinfo-card').hidden = false;
      $('userinfo-json').textContent = JSON.stringify(user, null, 2);
    });

  $('metadata').onsubmit = (event) => {
    event.preventDefault();
    let value;
    try {
      value = JSON.parse($('metadata-json').value || '{}');
    } catch {
      return show('user_metadata must be a JSON object: fix the text, e.g. {"theme": "dark"}, then save again.', 'error');
    }
    management().patchUserMetadata(session.idTokenPayload.sub, value, (error, user) => {
      if (error) return showError(error);
      $('metadata-json').value = JSON.stringify(user.user_metadata, null, 2);
      show('Saved.', 'ok');
    });
  };

  $('link').onclick = () =>
    webAuth.popup.authorize({ prompt: 'login', scope: 'openid email' }, (error, second) => {
      if (error) return showError(error);
      management().linkUser(session.idTokenPayload.sub, second.idToken, (e) => {
        if (e) return showError(e);
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
        showError(error);
        return render(webAuth);
      }
      signedIn(result);
    });
  } else {
    // No short timeout: on a slow machine the answer comes late, not wrong (a timeout would show signed out).
    show('Checking whether you are already logged in…');
    webAuth.checkSession({}, (error, result) => {
      if (!error) {
        show('');
        return signedIn(result);
      }
      if (error.error === 'login_required' || error.code === 'login_required') show('');
      else showError(error, 'Could not check for an existing session. ');
      render(webAuth);
    });
  }
}

function management() {
  return new svc.Management({ domain: origin, token: session.accessToken });
}

function loadProfile() {
  management().getUser(session.idTokenPayload.sub, (error, user) => {
    if (error) return showError(error);
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

window.addEventListener('DOMContentLoaded', () =>
  start().catch((error) => show(`The demo could not start (${String(error)}). Check that the server is running, then reload the page.`, 'error')),
);
