/**
 * "Set up your console account": where a console setup link leads (the first admin's, printed by `gatehouse
 * start`, or an invitation). Posts `ticket` (from the link), `email` (unless the invitation fixed it),
 * `password` and `password_confirmation`.
 */
import { alert, html, renderDocument, type PageContext } from './chrome.js';
import { INFO_ICON } from './message.js';
import { PASSWORD_RULES_ID, passwordRuleList, type PasswordRulesView } from './password-rules.js';

export function renderConsoleSetupPage(
  ctx: PageContext,
  view: { action: string; ticket: string; invitedEmail: string | null; email?: string; passwordRules?: PasswordRulesView; error?: string },
): string {
  const rules = view.passwordRules;
  const described = rules && rules.rules.length > 0 ? html` aria-describedby="${PASSWORD_RULES_ID}"` : '';
  const invalid = rules?.checked ? html` aria-invalid="true"` : '';
  const email = view.invitedEmail
    ? html`<p class="lead">for <strong>${view.invitedEmail}</strong></p>`
    : html`<div class="field">
<label for="email">Your email address</label>
<input id="email" name="email" type="email" autocomplete="email" required maxlength="320" value="${view.email ?? ''}" autofocus>
</div>`;
  const content = html`<div class="status-icon status-info">${INFO_ICON}</div>
<h1>Set up your console account</h1>
<p class="lead">You will administer ${ctx.branding.name}: its applications, users and event streams.</p>
${alert('error', view.error)}
<form method="post" action="${view.action}">
<input type="hidden" name="ticket" value="${view.ticket}">
${email}
<div class="field">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="new-password" required maxlength="1024"${view.invitedEmail ? html` autofocus` : ''}${described}${invalid}>
${passwordRuleList(rules)}
</div>
<div class="field">
<label for="password_confirmation">Confirm password</label>
<input id="password_confirmation" name="password_confirmation" type="password" autocomplete="new-password" required maxlength="1024">
</div>
<div class="actions"><button class="button button-primary" type="submit">Create account and open the console</button></div>
</form>`;
  return renderDocument(ctx, { title: 'Set up your console account', content });
}
