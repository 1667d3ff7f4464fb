/** Rendering the hosted pages' texts (login/texts.ts): a text is always escaped; the client's name is emphasised. */
import { ENGLISH, type LoginTexts, type SignupTexts } from '../texts.js';
import { html, type SafeHtml } from './html.js';

export type { LoginTexts, SignupTexts };
export const DEFAULT_LOGIN_TEXTS: LoginTexts = ENGLISH.login.login;
export const DEFAULT_SIGNUP_TEXTS: SignupTexts = ENGLISH.signup.signup;

/** `to continue to ${clientName}` with the name in <strong>; every part escaped. */
export function withClientName(text: string, clientName: string): SafeHtml {
  const parts = text.split('${clientName}');
  return parts.slice(1).reduce<SafeHtml>((acc, part) => html`${acc}<strong>${clientName}</strong>${part}`, html`${parts[0]!}`);
}
