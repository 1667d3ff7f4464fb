/**
 * The passkey page (login/passkey-page.ts): create a passkey for a new account, or (after a password login)
 * for next time, with a way to continue without one.
 */
import { alert, formGuards, html, renderDocument, type PageContext } from './chrome.js';
import { webauthnForm } from './webauthn.js';

export function renderPasskeyPage(
  ctx: PageContext,
  view: { action: string; csrfToken: string; transaction: string; purpose: 'signup' | 'add'; account: string; options: unknown; error?: string },
): string {
  const form = { action: view.action, csrfToken: view.csrfToken, transaction: view.transaction };
  const title = view.purpose === 'signup' ? 'Create your passkey' : 'Log in faster with a passkey';
  const content = html`<h1>${title}</h1>
<p class="lead">${
    view.purpose === 'signup'
      ? html`Your account <strong>${view.account}</strong> will use a passkey instead of a password: your fingerprint, face, screen lock or security key.`
      : html`Next time, log in as <strong>${view.account}</strong> with your fingerprint, face or screen lock instead of your password.`
  }</p>
${alert('error', view.error)}
${webauthnForm({ ...form, mode: 'register', options: view.options, button: 'Create a passkey', primary: true })}
${
    view.purpose === 'add'
      ? html`<form method="post" action="${view.action}">
${formGuards(view.csrfToken, view.transaction)}
<input type="hidden" name="skip" value="yes">
<div class="actions"><button class="button button-secondary" type="submit">Not now</button></div>
</form>`
      : ''
  }`;
  return renderDocument(ctx, { title, content });
}
