/**
 * The WebAuthn part of a hosted page (login, signup, the passkey page, the MFA step): the ceremony's options as
 * a JSON data block (never executed), a form whose button starts the ceremony in the browser and posts its
 * answer (scripts.ts WEBAUTHN_SCRIPT, with @simplewebauthn/browser), and a status line for a ceremony that
 * failed or a browser without WebAuthn.
 */
import { ASSET_URLS } from '../assets.js';
import { formGuards, html, raw, type SafeHtml } from './chrome.js';

/** JSON that cannot close its <script> element or open a comment. */
function jsonForScriptElement(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export interface WebauthnFormView {
  action: string;
  csrfToken: string;
  transaction: string;
  mode: 'register' | 'authenticate';
  /** PublicKeyCredential{Creation,Request}OptionsJSON. */
  options: unknown;
  button: string;
  /** Offer passkeys in the username field's autofill too (login page). */
  autofill?: boolean;
  /** The button's look: primary where the ceremony is the page's point, secondary beside a password form. */
  primary?: boolean;
  /** Hidden fields the form posts besides the answer. */
  fields?: Record<string, string>;
  /** More of the form, above its button (the MFA step's "Remember this browser"). */
  extra?: SafeHtml | string;
}

export function webauthnForm(view: WebauthnFormView): SafeHtml {
  const fields = Object.entries(view.fields ?? {}).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`);
  return html`<script type="application/json" id="webauthn-options">${raw(jsonForScriptElement(view.options))}</script>
<form method="post" action="${view.action}" data-webauthn="${view.mode}"${view.autofill ? html` data-autofill` : ''}>
${formGuards(view.csrfToken, view.transaction)}${fields}
<input type="hidden" name="webauthn_response" value="">
<p class="webauthn-status" id="webauthn-status" role="alert" hidden data-failed="That did not work: the passkey or security key was not used, or is not registered here. Try again, or use another way." data-unsupported="This browser cannot use passkeys or security keys."></p>
${view.extra ?? ''}<div class="actions"><button class="button ${view.primary ? 'button-primary' : 'button-secondary'}" type="button" data-webauthn-start>${view.button}</button></div>
</form>
<script src="${ASSET_URLS.webauthnBrowser}" defer></script>
<script src="${ASSET_URLS.webauthn}" defer></script>`;
}
