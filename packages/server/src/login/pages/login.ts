/**
 * The log-in page: identifier and password for a database connection. Posts `username` (whatever the identifier
 * kind) and `password`, beside `_csrf` and `transaction`. "Forgot password?" follows the password field, so the
 * keyboard reaches the password straight from the identifier. Above it, a button per upstream identity provider
 * enabled for the application (federation); without a database connection, the buttons alone.
 */
import { alert, formGuards, html, renderDocument, type PageContext } from './chrome.js';
import { DEFAULT_LOGIN_TEXTS, withClientName, type LoginTexts } from './texts.js';
import { webauthnForm } from './webauthn.js';

const IDENTIFIER = {
  email: { label: 'emailPlaceholder', type: 'email', inputmode: 'email' },
  username: { label: 'usernamePlaceholder', type: 'text', inputmode: 'text' },
  email_or_username: { label: 'emailOrUsernamePlaceholder', type: 'text', inputmode: 'email' },
} as const;

export function renderLoginPage(
  ctx: PageContext,
  view: {
    action: string;
    csrfToken: string;
    transaction: string;
    clientName: string;
    /** Absent when the application has no database connection: the page then offers its buttons only. */
    identifierKind?: 'email' | 'username' | 'email_or_username';
    /** A button per upstream identity provider: its label and where it starts. */
    federated?: { label: string; url: string; icon?: string }[];
    identifier?: string;
    error?: string;
    signupUrl?: string;
    forgotPasswordUrl?: string;
    /** The page's texts in its language (login/texts.ts). */
    texts?: LoginTexts;
    /**
     * Passkeys enabled: the ceremony's options (PublicKeyCredentialRequestOptionsJSON), for the button and the
     * username field's autofill; not autofill again after a failed attempt, so a refused passkey the browser
     * hands back at once cannot loop.
     */
    passkeyOptions?: unknown;
    /** An enterprise connection routes emails by domain: an email alone may be sent (no password required here). */
    homeRealms?: boolean;
  },
): string {
  const t = view.texts ?? DEFAULT_LOGIN_TEXTS;
  const federated = view.federated ?? [];
  const buttons = federated.length
    ? html`<ul class="federated">${federated.map((b) => html`<li><a class="button button-secondary" href="${b.url}">${b.icon ? html`<img class="federated-icon" src="${b.icon}" alt="" width="20" height="20">` : ''}Continue with ${b.label}</a></li>`)}</ul>`
    : '';
  if (!view.identifierKind) {
    const content = html`<h1>${t.title}</h1>
<p class="lead">${withClientName(t.description, view.clientName)}</p>
${alert('error', view.error)}
${buttons}`;
    return renderDocument(ctx, { title: t.pageTitle, content });
  }
  const identifier = IDENTIFIER[view.identifierKind];
  // Back after a failed attempt: the identifier is kept, so the cursor goes where the next keystroke belongs.
  const focusPassword = Boolean(view.identifier);
  const content = html`<h1>${t.title}</h1>
<p class="lead">${withClientName(t.description, view.clientName)}</p>
${alert('error', view.error)}
${buttons}${federated.length ? html`<p class="separator">or</p>` : ''}
<form method="post" action="${view.action}">
${formGuards(view.csrfToken, view.transaction)}
<div class="field">
<label for="username">${t[identifier.label]}</label>
<input id="username" name="username" type="${identifier.type}" inputmode="${identifier.inputmode}" value="${view.identifier ?? ''}" autocomplete="${view.passkeyOptions ? 'username webauthn' : 'username'}" autocapitalize="none" spellcheck="false" required maxlength="320"${focusPassword ? '' : html` autofocus`}>
</div>
<div class="field">
<label for="password">${t.passwordPlaceholder}</label>
<input id="password" name="password" type="password" autocomplete="current-password"${view.homeRealms ? '' : html` required`} maxlength="1024"${focusPassword ? html` autofocus` : ''}>
${view.forgotPasswordUrl ? html`<p class="field-link"><a href="${view.forgotPasswordUrl}">${t.forgotPasswordText}</a></p>` : ''}
</div>
<div class="actions"><button class="button button-primary" type="submit">${t.buttonText}</button></div>
</form>
${view.passkeyOptions ? html`<p class="or">or</p>
${webauthnForm({ action: view.action, csrfToken: view.csrfToken, transaction: view.transaction, mode: 'authenticate', options: view.passkeyOptions, button: 'Log in with a passkey', autofill: view.error === undefined })}` : ''}
${view.signupUrl ? html`<p class="switch">${t.signupActionText} <a href="${view.signupUrl}">${t.signupActionLinkText}</a></p>` : ''}`;
  return renderDocument(ctx, { title: t.pageTitle, content });
}
