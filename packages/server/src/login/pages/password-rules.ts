/**
 * The password policy under a new-password field (sign-up, reset): one line per rule in words, and after a
 * refused attempt each line marked met or not met, in text for screen readers as well as by its icon. With the
 * sentence that tells the person what to do about a refused password.
 */
import type { PasswordCheck, PasswordRule } from '../../connections/password-policy.js';
import { html, type SafeHtml } from './chrome.js';

export const PASSWORD_RULES_ID = 'password-rules';

/** The rules to show, and whether they were checked against what the person typed. */
export interface PasswordRulesView {
  rules: PasswordRule[];
  checked: boolean;
}

function ruleLine(rule: PasswordRule, checked: boolean): SafeHtml {
  const state = checked ? (rule.verified ? 'met' : 'unmet') : 'unchecked';
  const said = checked ? html`<span class="visually-hidden">${rule.verified ? 'Done: ' : 'Still needed: '}</span>` : '';
  const items = rule.items?.length ? html`<ul>${rule.items.map((item) => ruleLine(item, checked))}</ul>` : '';
  return html`<li class="rule rule-${state}">${said}${rule.message}${items}</li>`;
}

/** The list, tied to the password field by `aria-describedby="password-rules"`; empty when the policy has no rules. */
export function passwordRuleList(view: PasswordRulesView | undefined): SafeHtml {
  if (!view || view.rules.length === 0) return html``;
  return html`<ul class="hint rules" id="${PASSWORD_RULES_ID}" aria-label="Your password must have">${view.rules.map((rule) => ruleLine(rule, view.checked))}</ul>`;
}

/** What the person should do about a password the policy refused. */
export function passwordAdvice(check: Extract<PasswordCheck, { ok: false }>): string {
  switch (check.name) {
    case 'PasswordDictionaryError':
      return 'This password is too common. Choose one that is harder to guess.';
    case 'PasswordNoUserInfoError':
      return 'This password contains your email address, username or name. Choose one without them.';
    case 'PasswordStrengthError':
      return 'Choose a stronger password: it must meet each rule marked as still needed below.';
  }
}
