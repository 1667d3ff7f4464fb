/**
 * "Choose a new password": where a reset email's link leads. Posts `ticket` (from the link), `password` and
 * `password_confirmation`. The ticket is the form's only credential, so the page needs no login transaction.
 */
import { alert, html, renderDocument, type PageContext } from './chrome.js';
import { PASSWORD_RULES_ID, passwordRuleList, type PasswordRulesView } from './password-rules.js';
import { INFO_ICON } from './message.js';

export function renderResetPasswordPage(
  ctx: PageContext,
  view: { action: string; ticket: string; email: string; passwordRules?: PasswordRulesView; error?: string },
): string {
  const rules = view.passwordRules;
  const described = rules && rules.rules.length > 0 ? html` aria-describedby="${PASSWORD_RULES_ID}"` : '';
  const invalid = rules?.checked ? html` aria-invalid="true"` : '';
  const content = html`<div class="status-icon status-info">${INFO_ICON}</div>
<h1>Choose a new password</h1>
<p class="lead">for <strong>${view.email}</strong></p>
${alert('error', view.error)}
<form method="post" action="${view.action}">
<input type="hidden" name="ticket" value="${view.ticket}">
<div class="field">
<label for="password">New password</label>
<input id="password" name="password" type="password" autocomplete="new-password" required maxlength="1024" autofocus${described}${invalid}>
${passwordRuleList(rules)}
</div>
<div class="field">
<label for="password_confirmation">Confirm new password</label>
<input id="password_confirmation" name="password_confirmation" type="password" autocomplete="new-password" required maxlength="1024">
</div>
<div class="actions"><button class="button button-primary" type="submit">Reset password</button></div>
</form>`;
  return renderDocument(ctx, { title: 'Reset your password', content });
}
