/**
 * The only scripts hosted pages run, served from 'self' (the CSP allows no inline script). Plain ES5-level
 * browser code kept as strings so it ships in the tsc build; the pages carry their data in the markup.
 */

/**
 * response_mode=form_post: submit the page's form as soon as it is parsed. The prototype's submit is called
 * because a response field named "submit" would shadow `form.submit`.
 */
export const FORM_POST_SCRIPT = `(function () {
  'use strict';
  var form = document.querySelector('form[data-auto-submit]');
  if (!form) return;
  HTMLFormElement.prototype.submit.call(form);
})();
`;

/**
 * response_mode=web_message: post the authorization response to the window that framed (or opened) this page,
 * addressed to exactly the origin the server put in data-target-origin. Never '*': a wrong origin must make the
 * browser drop the message, not deliver tokens to whoever framed the page.
 */
export const WEB_MESSAGE_SCRIPT = `(function () {
  'use strict';
  var origin = document.body.getAttribute('data-target-origin');
  var data = document.getElementById('authorization-response');
  if (!origin || origin === '*' || !/^https?:\\/\\/[^\\/?#\\s]+$/.test(origin) || !data) return;
  var response = JSON.parse(data.textContent || '{}');
  var target = window.parent !== window ? window.parent : window.opener;
  if (!target) return;
  target.postMessage({ type: 'authorization_response', response: response }, origin);
})();
`;

/**
 * Cross-origin verification (login/pages/cross-origin-verification.ts): frame the app's verification page,
 * answer its `ready` with a request for the ticket's co_verifier, and post the verifier to /co/verify. Messages
 * count only from that frame at the app's origin. The frame is made here, after the listener exists, so its
 * `ready` cannot arrive unheard; if no answer comes, an empty verifier is posted and the server refuses it.
 */
export const CROSS_ORIGIN_VERIFICATION_SCRIPT = `(function () {
  'use strict';
  var root = document.getElementById('co-verification');
  var form = document.querySelector('form[data-co-verify]');
  if (!root || !form) return;
  var coId = root.getAttribute('data-co-id');
  var appOrigin = root.getAttribute('data-app-origin');
  var frameSrc = root.getAttribute('data-frame-src');
  if (!coId || !appOrigin || appOrigin === '*' || !frameSrc) return;
  var frame = document.createElement('iframe');
  var sent = false;
  function finish(verifier) {
    if (sent) return;
    sent = true;
    form.querySelector('input[name="verifier"]').value = verifier;
    HTMLFormElement.prototype.submit.call(form);
  }
  window.addEventListener('message', function (event) {
    var data = event.data;
    if (event.origin !== appOrigin || event.source !== frame.contentWindow || !data || typeof data !== 'object') return;
    if (data.type === 'ready') {
      frame.contentWindow.postMessage({ type: 'co_verifier_request', request: { id: coId } }, appOrigin);
    } else if (data.type === 'co_verifier_response') {
      var verifier = data.response && data.response.verifier;
      finish(typeof verifier === 'string' ? verifier : '');
    }
  });
  frame.hidden = true;
  frame.title = 'Cross-origin verification';
  frame.src = frameSrc;
  document.body.appendChild(frame);
  setTimeout(function () { finish(''); }, 20000);
})();
`;

/**
 * WebAuthn on the hosted pages, through @simplewebauthn/browser (served beside this): the page carries the
 * ceremony's options as JSON (#webauthn-options) and a form marked data-webauthn="register" or
 * "authenticate"; its button starts the ceremony and the answer is posted in the form's webauthn_response
 * field (no fetch: the CSP allows none). With data-autofill, a passkey login is also offered in the username
 * field's autofill where the browser supports it (conditional mediation). A failed or cancelled ceremony the
 * person started says so in #webauthn-status and leaves the page as it was.
 */
export const WEBAUTHN_SCRIPT = `(function () {
  'use strict';
  var data = document.getElementById('webauthn-options');
  var form = document.querySelector('form[data-webauthn]');
  var lib = window.SimpleWebAuthnBrowser;
  if (!data || !form || !lib) return;
  var options = JSON.parse(data.textContent || '{}');
  var register = form.getAttribute('data-webauthn') === 'register';
  var field = form.querySelector('input[name="webauthn_response"]');
  var button = form.querySelector('[data-webauthn-start]');
  var status = document.getElementById('webauthn-status');
  if (!lib.browserSupportsWebAuthn()) {
    if (button) button.hidden = true;
    if (status) { status.textContent = status.getAttribute('data-unsupported') || ''; status.hidden = false; }
    return;
  }
  function send(answer) {
    field.value = JSON.stringify(answer);
    HTMLFormElement.prototype.submit.call(form);
  }
  function failed(error) {
    // A ceremony replaced by a newer one (the button after autofill) is not a failure.
    if (error && error.name === 'AbortError') return;
    if (status) { status.textContent = status.getAttribute('data-failed') || ''; status.hidden = false; }
  }
  if (!register && form.hasAttribute('data-autofill') && lib.browserSupportsWebAuthnAutofill) {
    lib.browserSupportsWebAuthnAutofill().then(function (supported) {
      // The person did not ask for this one: if it ends without a passkey, nothing is said.
      if (supported) lib.startAuthentication({ optionsJSON: options, useBrowserAutofill: true }).then(send, function () {});
    });
  }
  if (button) {
    button.addEventListener('click', function (event) {
      event.preventDefault();
      if (status) status.hidden = true;
      var started = register ? lib.startRegistration({ optionsJSON: options }) : lib.startAuthentication({ optionsJSON: options });
      started.then(send, failed);
    });
  }
})();
`;
