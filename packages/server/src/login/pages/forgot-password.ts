/**
 * "Forgot password": asks for the email address (posts `email`, beside `_csrf` and `transaction`), then shows a
 * "check your inbox" state. That state never says whether an account exists, so it cannot be used to probe for
 * addresses.
 */
import { alert, formGuards, html, renderDocument, type PageContext } from './chrome.js';
import { INFO_ICON } from './message.js';

const MAIL_ICON = html`<svg viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" d="M4 6h16a1 1 0 0 1 1 1v10a1 1 0 0 1-1 1H4a1 1 0 0 1-1-1V7a1 1 0 0 1 1-1Zm17 1.5-9 6-9-6"/></svg>`;

export function renderForgotPasswordPage(
  ctx: PageContext,
  view: {
    action: string;
    csrfToken: string;
    transaction?: string;
    email?: string;
    sent?: boolean;
    error?: string;
    loginUrl?: string;
  },
): string {
  const back = view.loginUrl ? html`<p class="switch"><a href="${view.loginUrl}">Back to log in</a></p>` : '';
  if (view.sent) {
    const content = html`<div class="status-icon status-info">${MAIL_ICON}</div>
<h1>Check your email</h1>
<p class="lead">If an account exists for ${view.email ? html`<strong>${view.email}</strong>` : 'that address'}, we have sent it a link to reset the password. If it does not arrive within a few minutes, check your spam folder.</p>
${back}`;
    return renderDocument(ctx, { title: 'Check your email', content });
  }
  const content = html`<div class="status-icon status-info">${INFO_ICON}</div>
<h1>Forgot your password?</h1>
<p class="lead">Enter your email address and we will send you a link to reset your password.</p>
${alert('error', view.error)}
<form method="post" action="${view.action}">
${formGuards(view.csrfToken, view.transaction)}
<div class="field">
<label for="email">Email address</label>
<input id="email" name="email" type="email" inputmode="email" value="${view.email ?? ''}" autocomplete="email" autocapitalize="none" spellcheck="false" required maxlength="320" autofocus>
</div>
<div class="actions"><button class="button button-primary" type="submit">Send reset link</button></div>
</form>
${back}`;
  return renderDocument(ctx, { title: 'Reset your password', content });
}
