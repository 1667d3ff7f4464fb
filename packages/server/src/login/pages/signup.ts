/**
 * The sign-up page. Posts `email`, `username` (only when the connection requires one) and `password`, beside
 * `_csrf` and `transaction`. The password rules, when given, are listed under the field and tied to it for
 * screen readers; after a refused password they are marked met or still needed, and the password field has focus.
 */
import { alert, formGuards, html, renderDocument, type PageContext } from './chrome.js';
import { DEFAULT_SIGNUP_TEXTS, withClientName, type SignupTexts } from './texts.js';
import { PASSWORD_RULES_ID, passwordRuleList, type PasswordRulesView } from './password-rules.js';

export function renderSignupPage(
  ctx: PageContext,
  view: {
    action: string;
    csrfToken: string;
    transaction: string;
    clientName: string;
    requireUsername: boolean;
    email?: string;
    username?: string;
    error?: string;
    passwordRules?: PasswordRulesView;
    loginUrl: string;
    /** The page's texts in its language (login/texts.ts). */
    texts?: SignupTexts;
    /** Passkeys enabled: a second way to sign up, with the email alone and a passkey instead of a password. */
    passkeys?: boolean;
  },
): string {
  const t = view.texts ?? DEFAULT_SIGNUP_TEXTS;
  const rules = view.passwordRules;
  const described = rules && rules.rules.length > 0 ? html` aria-describedby="${PASSWORD_RULES_ID}"` : '';
  const invalid = rules?.checked ? html` aria-invalid="true"` : '';
  const content = html`<h1>${t.title}</h1>
<p class="lead">${withClientName(t.description, view.clientName)}</p>
${alert('error', view.error)}
<form method="post" action="${view.action}">
${formGuards(view.csrfToken, view.transaction)}
<div class="field">
<label for="email">${t.emailPlaceholder}</label>
<input id="email" name="email" type="email" inputmode="email" value="${view.email ?? ''}" autocomplete="email" autocapitalize="none" spellcheck="false" required maxlength="320"${rules?.checked ? '' : html` autofocus`}>
</div>
${
  view.requireUsername
    ? html`<div class="field">
<label for="username">${t.usernamePlaceholder}</label>
<input id="username" name="username" type="text" value="${view.username ?? ''}" autocomplete="username" autocapitalize="none" spellcheck="false" required maxlength="128">
</div>`
    : ''
}
<div class="field">
<label for="password">${t.passwordPlaceholder}</label>
<input id="password" name="password" type="password" autocomplete="new-password" required maxlength="1024"${described}${invalid}${rules?.checked ? html` autofocus` : ''}>
${passwordRuleList(rules)}
</div>
<div class="actions"><button class="button button-primary" type="submit">${t.buttonText}</button></div>
${view.passkeys ? html`<p class="or">or</p>
<div class="actions"><button class="button button-secondary" type="submit" name="method" value="passkey" formnovalidate>Sign up with a passkey</button></div>` : ''}
</form>
<p class="switch">${t.loginActionText} <a href="${view.loginUrl}">${t.loginActionLinkText}</a></p>`;
  return renderDocument(ctx, { title: t.pageTitle, content });
}
