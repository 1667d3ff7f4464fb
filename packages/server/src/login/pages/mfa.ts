/**
 * The second step of a login (login/mfa-page.ts): enrolling an authenticator app (a QR code of the otpauth
 * URI, drawn server-side as inline SVG, and the secret as text for typing in), answering with a code or the
 * recovery code, and the recovery code to keep, shown once. The enrollment ticket's page uses the same
 * enrollment view, and ends on its own page (nothing to continue to: a ticket never logs in).
 */
import QRCode from 'qrcode';
import { alert, formGuards, html, raw, renderDocument, type PageContext } from './chrome.js';
import { webauthnForm } from './webauthn.js';

interface MfaForm {
  action: string;
  csrfToken: string;
  transaction: string;
  /** An enrollment ticket's secret (login/mfa-enrollment-ticket-page.ts), posted back instead of a login's transaction. */
  ticket?: string;
  error?: string;
  /** "Remember this browser", where the tenant offers it (Guardian settings), ticked or not to start with. */
  remember?: { checked: boolean; days: number };
}

/** The reference's `rememberBrowser` field: on a form that finishes the step, never on enrollment. */
function rememberField(view: MfaForm) {
  if (!view.remember) return '';
  return html`<div class="remember"><input id="rememberBrowser" name="rememberBrowser" type="checkbox" value="true"${view.remember.checked ? raw(' checked') : ''}><label for="rememberBrowser">Remember this browser for ${view.remember.days === 1 ? '1 day' : `${view.remember.days} days`}</label></div>`;
}

/** Groups of four, as authenticator apps print secrets: easier to copy by hand. */
const grouped = (value: string) => value.replace(/(.{4})(?=.)/g, '$1 ');

/** The otpauth URI as a QR code, inline SVG (no image request, nothing for the CSP to allow). */
export function qrCodeSvg(uri: string): Promise<string> {
  return QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 1 });
}

const FACTOR_LINKS = { 'webauthn-roaming': 'Use a security key instead', 'webauthn-platform': 'Use this device (fingerprint, face or screen lock) instead' } as const;

export function renderMfaEnrollPage(ctx: PageContext, view: MfaForm & { secret: string; qrSvg: string; alternatives?: { factor: keyof typeof FACTOR_LINKS; url: string }[] }): string {
  // qrSvg is the library's own markup for our own URI (a base32 secret and escaped names): trusted, not input.
  const qr = view.qrSvg;
  const content = html`<h1>Secure your account</h1>
<p class="lead">Scan this code with an authenticator app (Google Authenticator, 1Password, Authy…), then enter the 6-digit code it shows.</p>
${alert('error', view.error)}
<figure class="qr" role="img" aria-label="QR code of the authenticator secret">${raw(qr)}</figure>
<p class="lead">Can’t scan it? Enter this key in the app:</p>
<p class="secret" id="secret" data-secret="${view.secret}">${grouped(view.secret)}</p>
${codeForm(view, 'Verify')}
${(view.alternatives ?? []).map((a) => html`<p class="switch"><a href="${a.url}">${FACTOR_LINKS[a.factor]}</a></p>`)}`;
  return renderDocument(ctx, { title: 'Secure your account', content });
}

export function renderMfaWebauthnEnrollPage(ctx: PageContext, view: MfaForm & { factor: keyof typeof FACTOR_LINKS; options: unknown; otpUrl?: string }): string {
  const roaming = view.factor === 'webauthn-roaming';
  const content = html`<h1>Secure your account</h1>
<p class="lead">${roaming ? 'Register a security key: insert or tap it when your browser asks.' : 'Register this device: confirm with your fingerprint, face or screen lock when your browser asks.'}</p>
${alert('error', view.error)}
${webauthnForm({ ...view, mode: 'register', options: view.options, button: roaming ? 'Register a security key' : 'Register this device', primary: true, fields: { method: view.factor } })}
${view.otpUrl ? html`<p class="switch"><a href="${view.otpUrl}">Use an authenticator app instead</a></p>` : ''}`;
  return renderDocument(ctx, { title: 'Secure your account', content });
}

export function renderMfaWebauthnChallengePage(ctx: PageContext, view: MfaForm & { options: unknown; otpUrl?: string; recoveryCodeUrl?: string; emailUrl?: string }): string {
  const content = html`<h1>Verify your identity</h1>
<p class="lead">Use your security key or this device’s fingerprint, face or screen lock.</p>
${alert('error', view.error)}
${webauthnForm({ ...view, mode: 'authenticate', options: view.options, button: 'Use security key or device', primary: true, extra: rememberField(view) })}
${view.otpUrl ? html`<p class="switch"><a href="${view.otpUrl}">Use your authenticator app</a></p>` : ''}
${view.emailUrl ? html`<p class="switch"><a href="${view.emailUrl}">Email me a code instead</a></p>` : ''}
${view.recoveryCodeUrl ? html`<p class="switch"><a href="${view.recoveryCodeUrl}">Use your recovery code</a></p>` : ''}`;
  return renderDocument(ctx, { title: 'Verify your identity', content });
}

/** The email factor: send a code, then enter it (with a way to send another, and back to the other factor). */
export function renderMfaEmailPage(ctx: PageContext, view: MfaForm & { sent: boolean; address: string; canSendMore: boolean; otherUrl: string }): string {
  const send = view.canSendMore
    ? html`<form method="post" action="${view.action}">
${formGuards(view.csrfToken, view.transaction)}
<input type="hidden" name="send_email_code" value="yes">
<div class="actions"><button class="button ${view.sent ? 'button-secondary' : 'button-primary'}" type="submit">${view.sent ? 'Send a new code' : 'Email me a code'}</button></div>
</form>`
    : '';
  const content = html`<h1>Verify your identity</h1>
<p class="lead">${view.sent ? html`We sent a 6-digit code to <strong>${view.address}</strong>. It works once, for 5 minutes.` : html`We can email a 6-digit code to <strong>${view.address}</strong>.`}</p>
${alert('error', view.error)}
${view.sent ? html`<form method="post" action="${view.action}">
${formGuards(view.csrfToken, view.transaction)}
<div class="field">
<label for="email_code">Code from the email</label>
<input id="email_code" name="email_code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]{6,7}" maxlength="7" required autofocus>
</div>
${rememberField(view)}
<div class="actions"><button class="button button-primary" type="submit">Continue</button></div>
</form>` : ''}
${send}
<p class="switch"><a href="${view.otherUrl}">Use another method</a></p>`;
  return renderDocument(ctx, { title: 'Verify your identity', content });
}

function codeForm(view: MfaForm, submit: string) {
  return html`<form method="post" action="${view.action}">
${formGuards(view.csrfToken, view.transaction)}${view.ticket ? html`<input type="hidden" name="ticket" value="${view.ticket}">` : ''}
<div class="field">
<label for="code">6-digit code</label>
<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]{6,7}" maxlength="7" required autofocus>
</div>
${rememberField(view)}
<div class="actions"><button class="button button-primary" type="submit">${submit}</button></div>
</form>`;
}

export function renderMfaChallengePage(ctx: PageContext, view: MfaForm & { recoveryCodeUrl?: string; emailUrl?: string }): string {
  const content = html`<h1>Verify your identity</h1>
<p class="lead">Enter the 6-digit code from your authenticator app.</p>
${alert('error', view.error)}
${codeForm(view, 'Continue')}
${view.emailUrl ? html`<p class="switch"><a href="${view.emailUrl}">Email me a code instead</a></p>` : ''}
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
${rememberField(view)}
<div class="actions"><button class="button button-primary" type="submit">I have saved it, continue</button></div>
</form>`;
  return renderDocument(ctx, { title: 'Save your recovery code', content });
}

/** An enrollment ticket's end: the app is set up; the recovery code, when one was issued, shown once. */
export function renderMfaTicketEnrolledPage(ctx: PageContext, view: { recoveryCode?: string }): string {
  const content = html`<h1>Your authenticator app is set up</h1>
<p class="lead">From now on, after your password you will be asked for the 6-digit code it shows. Go back to the application and log in.</p>
${view.recoveryCode
  ? html`<p class="lead">If you lose your device, this recovery code lets you log in. Keep it somewhere safe: it is shown only now, and works once.</p>
<p class="secret" id="recovery-code">${view.recoveryCode}</p>`
  : ''}`;
  return renderDocument(ctx, { title: 'Your authenticator app is set up', content });
}
