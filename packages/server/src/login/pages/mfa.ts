/**
 * The second step of a login (login/mfa-page.ts): enrolling an authenticator app (a QR code of the otpauth
 * URI, drawn server-side as inline SVG, and the secret as text for typing in), answering with a code or the
 * recovery code, and the recovery code to keep, shown once.
 */
import QRCode from 'qrcode';
import { alert, formGuards, html, raw, renderDocument, type PageContext } from './chrome.js';

interface MfaForm {
  action: string;
  csrfToken: string;
  transaction: string;
  error?: string;
}

/** Groups of four, as authenticator apps print secrets: easier to copy by hand. */
const grouped = (value: string) => value.replace(/(.{4})(?=.)/g, '$1 ');

/** The otpauth URI as a QR code, inline SVG (no image request, nothing for the CSP to allow). */
export function qrCodeSvg(uri: string): Promise<string> {
  return QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 1 });
}

export function renderMfaEnrollPage(ctx: PageContext, view: MfaForm & { secret: string; qrSvg: string }): string {
  // qrSvg is the library's own markup for our own URI (a base32 secret and escaped names): trusted, not input.
  const qr = view.qrSvg;
  const content = html`<h1>Secure your account</h1>
<p class="lead">Scan this code with an authenticator app (Google Authenticator, 1Password, Authy…), then enter the 6-digit code it shows.</p>
${alert('error', view.error)}
<figure class="qr" role="img" aria-label="QR code of the authenticator secret">${raw(qr)}</figure>
<p class="lead">Can’t scan it? Enter this key in the app:</p>
<p class="secret" id="secret" data-secret="${view.secret}">${grouped(view.secret)}</p>
${codeForm(view, 'Verify')}`;
  return renderDocument(ctx, { title: 'Secure your account', content });
}

function codeForm(view: MfaForm, submit: string) {
  return html`<form method="post" action="${view.action}">
${formGuards(view.csrfToken, view.transaction)}
<div class="field">
<label for="code">6-digit code</label>
<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]{6,7}" maxlength="7" required autofocus>
</div>
<div class="actions"><button class="button button-primary" type="submit">${submit}</button></div>
</form>`;
}

export function renderMfaChallengePage(ctx: PageContext, view: MfaForm & { recoveryCodeUrl?: string }): string {
  const content = html`<h1>Verify your identity</h1>
<p class="lead">Enter the 6-digit code from your authenticator app.</p>
${alert('error', view.error)}
${codeForm(view, 'Continue')}
${view.recoveryCodeUrl ? html`<p class="switch"><a href="${view.recoveryCodeUrl}">Use your recovery code</a></p>` : ''}`;
  return renderDocument(ctx, { title: 'Verify your identity', content });
}

export function renderMfaRecoveryCodeEntryPage(ctx: PageContext, view: MfaForm & { codeUrl: string }): string {
  const content = html`<h1>Use your recovery code</h1>
<p class="lead">Enter the recovery code you saved when you set up your authenticator app.</p>
${alert('error', view.error)}
<form method="post" action="${view.action}">
${formGuards(view.csrfToken, view.transaction)}
<div class="field">
<label for="recovery_code">Recovery code</label>
<input id="recovery_code" name="recovery_code" type="text" autocomplete="off" autocapitalize="characters" spellcheck="false" maxlength="64" required autofocus>
</div>
<div class="actions"><button class="button button-primary" type="submit">Continue</button></div>
</form>
<p class="switch"><a href="${view.codeUrl}">Use your authenticator app</a></p>`;
  return renderDocument(ctx, { title: 'Use your recovery code', content });
}

export function renderMfaRecoveryCodePage(ctx: PageContext, view: MfaForm & { code: string }): string {
  const content = html`<h1>Save your recovery code</h1>
<p class="lead">If you lose your device, this code lets you log in. Keep it somewhere safe: it is shown only now, and works once.</p>
${alert('error', view.error)}
<p class="secret" id="recovery-code">${view.code}</p>
<form method="post" action="${view.action}">
${formGuards(view.csrfToken, view.transaction)}
<input type="hidden" name="saved" value="yes">
<div class="actions"><button class="button button-primary" type="submit">I have saved it, continue</button></div>
</form>`;
  return renderDocument(ctx, { title: 'Save your recovery code', content });
}
