/**
 * The log-in page: identifier and password for a database connection. Posts `username` (whatever the identifier
 * kind) and `password`, beside `_csrf` and `transaction`. "Forgot password?" follows the password field, so the
 * keyboard reaches the password straight from the identifier.
 */
import { alert, formGuards, html, renderDocument, type PageContext } from './chrome.js';

const IDENTIFIER = {
  email: { label: 'Email address', type: 'email', inputmode: 'email' },
  username: { label: 'Username', type: 'text', inputmode: 'text' },
  email_or_username: { label: 'Email or username', type: 'text', inputmode: 'email' },
} as const;

export function renderLoginPage(
  ctx: PageContext,
  view: {
    action: string;
    csrfToken: string;
    transaction: string;
    clientName: string;
    identifierKind: 'email' | 'username' | 'email_or_username';
    identifier?: string;
    error?: string;
    signupUrl?: string;
    forgotPasswordUrl?: string;
  },
): string {
  const identifier = IDENTIFIER[view.identifierKind];
  // Back after a failed attempt: the identifier is kept, so the cursor goes where the next keystroke belongs.
  const focusPassword = Boolean(view.identifier);
  const content = html`<h1>Log in</h1>
<p class="lead">to continue to <strong>${view.clientName}</strong></p>
${alert('error', view.error)}
<form method="post" action="${view.action}">
${formGuards(view.csrfToken, view.transaction)}
<div class="field">
<label for="username">${identifier.label}</label>
<input id="username" name="username" type="${identifier.type}" inputmode="${identifier.inputmode}" value="${view.identifier ?? ''}" autocomplete="username" autocapitalize="none" spellcheck="false" required maxlength="320"${focusPassword ? '' : html` autofocus`}>
</div>
<div class="field">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024"${focusPassword ? html` autofocus` : ''}>
${view.forgotPasswordUrl ? html`<p class="field-link"><a href="${view.forgotPasswordUrl}">Forgot password?</a></p>` : ''}
</div>
<div class="actions"><button class="button button-primary" type="submit">Continue</button></div>
</form>
${view.signupUrl ? html`<p class="switch">Don’t have an account? <a href="${view.signupUrl}">Sign up</a></p>` : ''}`;
  return renderDocument(ctx, { title: 'Log in', content });
}
