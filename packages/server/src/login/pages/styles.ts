/**
 * The hosted pages' stylesheet. The tenant's colour arrives as custom properties set in a nonce'd <style>
 * (chrome.ts); the defaults here are used by pages without branding (form_post) and if that element is absent.
 */
export const STYLESHEET = `:root {
  --brand: #3559e0;
  --on-brand: #ffffff;
  --brand-ink: #3559e0;
  --text: #1a1f29;
  --muted: #545d6b;
  --border: #c9ced8;
  --border-soft: #e3e6ec;
  --surface: #ffffff;
  --page: #f3f4f7;
  --danger: #b42318;
  --danger-bg: #fef3f2;
  --danger-border: #fecdca;
  --success: #066a44;
  --success-bg: #ecfdf3;
  --success-border: #abefc6;
  --radius: 10px;
  --focus: 0 0 0 3px color-mix(in srgb, var(--brand-ink) 30%, transparent);
  color-scheme: light;
}

*, *::before, *::after { box-sizing: border-box; }

html {
  -webkit-text-size-adjust: 100%;
  text-size-adjust: 100%;
}

body {
  margin: 0;
  min-height: 100vh;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", "Noto Sans", "Liberation Sans", Arial, sans-serif;
  font-size: 15px;
  line-height: 1.5;
  color: var(--text);
  background:
    linear-gradient(180deg, color-mix(in srgb, var(--brand) 14%, var(--page)) 0, var(--page) 340px) no-repeat,
    var(--page);
  -webkit-font-smoothing: antialiased;
}

.shell {
  min-height: 100vh;
  display: flex;
  align-items: center;
  justify-content: center;
  padding: 48px 16px;
}

.card {
  width: 100%;
  max-width: 400px;
  background: var(--surface);
  border: 1px solid var(--border-soft);
  border-radius: 14px;
  box-shadow: 0 1px 2px rgba(16, 24, 40, 0.05), 0 16px 40px -12px rgba(16, 24, 40, 0.16);
  padding: 40px 40px 32px;
}

.card-wide { max-width: 440px; }

/* Brand header: logo or monogram, then the tenant's name. */
.brand {
  display: flex;
  flex-direction: column;
  align-items: center;
  gap: 10px;
  margin-bottom: 24px;
}

.brand-logo {
  display: block;
  width: auto;
  height: auto;
  max-width: min(220px, 100%);
  max-height: 56px;
  object-fit: contain;
}

.brand-mark {
  display: grid;
  place-items: center;
  width: 48px;
  height: 48px;
  border-radius: 12px;
  background: var(--brand);
  color: var(--on-brand);
  font-size: 22px;
  font-weight: 700;
  line-height: 1;
}

.brand-name {
  font-size: 13px;
  font-weight: 600;
  letter-spacing: 0.02em;
  color: var(--muted);
  text-align: center;
  overflow-wrap: anywhere;
}

h1 {
  margin: 0 0 6px;
  font-size: 24px;
  line-height: 1.25;
  font-weight: 700;
  letter-spacing: -0.01em;
  text-align: center;
  overflow-wrap: anywhere;
}

.lead {
  margin: 0 0 24px;
  color: var(--muted);
  text-align: center;
  overflow-wrap: anywhere;
}

.lead strong { color: var(--text); font-weight: 600; }

p { margin: 0 0 16px; }

a {
  color: var(--brand-ink);
  font-weight: 600;
  text-decoration: none;
  border-radius: 3px;
}

a:hover { text-decoration: underline; text-underline-offset: 2px; }

:focus-visible {
  outline: 2px solid var(--brand-ink);
  outline-offset: 2px;
}

/* Forms */
form { margin: 0; }

.field { margin-bottom: 18px; }
.remember { display: flex; gap: 8px; align-items: center; margin: 0 0 18px; font-size: 14px; }
.remember label { margin: 0; font-weight: 400; }
.remember input { width: 18px; height: 18px; margin: 0; accent-color: var(--primary, #3b5bdb); }

label {
  display: block;
  margin-bottom: 6px;
  font-size: 14px;
  font-weight: 600;
  color: var(--text);
}

.field-link { margin: 8px 0 0; font-size: 14px; text-align: right; }

input[type="text"], input[type="email"], input[type="password"] {
  display: block;
  width: 100%;
  height: 46px;
  padding: 0 14px;
  font: inherit;
  font-size: 16px;
  color: var(--text);
  background: var(--surface);
  border: 1px solid var(--border);
  border-radius: var(--radius);
  transition: border-color 120ms ease, box-shadow 120ms ease;
  appearance: none;
}

input::placeholder { color: #8a919e; }

input:hover { border-color: #a9b0bd; }

input:focus, input:focus-visible {
  outline: 2px solid transparent;
  border-color: var(--brand-ink);
  box-shadow: var(--focus);
}

input[aria-invalid="true"] { border-color: var(--danger); }

.hint {
  margin: 8px 0 0;
  padding: 0;
  list-style: none;
  font-size: 13px;
  color: var(--muted);
}

.hint li {
  position: relative;
  padding-left: 18px;
  margin-top: 2px;
}

.hint li::before {
  content: "";
  position: absolute;
  left: 4px;
  top: 0.6em;
  width: 6px;
  height: 6px;
  border-radius: 50%;
  background: color-mix(in srgb, var(--brand) 55%, #c9ced8);
}

/* The password checklist: after a refused password, each rule says whether it is met (in words for screen readers). */
.rules ul { margin: 2px 0 0; padding: 0; list-style: none; }

.rules .rule-met { color: var(--success); }

.rules .rule-unmet { color: var(--danger); }

.rules .rule-met::before,
.rules .rule-unmet::before {
  left: 2px;
  top: 0;
  width: auto;
  height: auto;
  border-radius: 0;
  background: none;
  font-weight: 700;
}

.rules .rule-met::before { content: "\\2713"; }

.rules .rule-unmet::before { content: "\\2717"; }

/* Buttons */
.button {
  display: inline-flex;
  align-items: center;
  justify-content: center;
  width: 100%;
  min-height: 46px;
  padding: 10px 18px;
  font: inherit;
  font-size: 16px;
  font-weight: 600;
  line-height: 1.2;
  text-align: center;
  text-decoration: none;
  border: 1px solid transparent;
  border-radius: var(--radius);
  cursor: pointer;
  transition: background-color 120ms ease, box-shadow 120ms ease, border-color 120ms ease;
}

.button:hover { text-decoration: none; }

.button:focus-visible {
  outline: 2px solid var(--brand-ink);
  outline-offset: 2px;
  box-shadow: var(--focus);
}

.button-primary {
  background: var(--brand);
  color: var(--on-brand);
  box-shadow: 0 1px 2px rgba(16, 24, 40, 0.1);
}

.button-primary:hover { background: color-mix(in srgb, var(--brand) 88%, #000); }

.button-primary:active { background: color-mix(in srgb, var(--brand) 80%, #000); }

.button-secondary {
  background: var(--surface);
  color: var(--text);
  border-color: var(--border);
}

.button-secondary:hover { background: #f6f7f9; border-color: #a9b0bd; }

.actions { margin-top: 24px; }

/* One button per upstream identity provider (federation), above the password form. */
.federated { display: grid; gap: 8px; margin: 20px 0 0; padding: 0; list-style: none; }

.federated-icon { margin-right: 10px; }

.separator { margin: 20px 0 0; text-align: center; color: #5b6270; font-size: 14px; }

.actions-split {
  display: flex;
  flex-direction: row-reverse;
  gap: 12px;
}

.actions-split .button { flex: 1 1 0; }

.switch {
  margin: 24px 0 0;
  font-size: 14px;
  color: var(--muted);
  text-align: center;
}

/* Alerts */
.alert {
  display: flex;
  gap: 10px;
  align-items: flex-start;
  margin: 0 0 20px;
  padding: 12px 14px;
  font-size: 14px;
  line-height: 1.45;
  border: 1px solid;
  border-radius: var(--radius);
}

.alert p { margin: 0; overflow-wrap: anywhere; }

.alert-icon { flex: none; width: 18px; height: 18px; margin-top: 1px; }

.alert-error { color: var(--danger); background: var(--danger-bg); border-color: var(--danger-border); }

.alert-success { color: var(--success); background: var(--success-bg); border-color: var(--success-border); }

/* Status pages: error, "check your inbox", logged out */
.status-icon {
  display: grid;
  place-items: center;
  width: 56px;
  height: 56px;
  margin: 0 auto 16px;
  border-radius: 50%;
}

.status-icon svg { width: 28px; height: 28px; }

.status-error { color: var(--danger); background: var(--danger-bg); }

.status-info { color: var(--brand-ink); background: color-mix(in srgb, var(--brand) 12%, #fff); }

.details {
  margin: 24px 0 0;
  padding: 12px 14px;
  font-size: 13px;
  color: var(--muted);
  background: #f7f8fa;
  border: 1px solid var(--border-soft);
  border-radius: var(--radius);
}

.details div { display: grid; grid-template-columns: 88px minmax(0, 1fr); gap: 8px; }

.details div + div { margin-top: 4px; }

.details dt { font-weight: 600; }

.details dd { margin: 0; font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace; overflow-wrap: anywhere; }

/* Consent */
.consent-apps {
  display: flex;
  align-items: center;
  justify-content: center;
  gap: 10px;
  margin-bottom: 16px;
}

.client-logo {
  display: block;
  width: 44px;
  height: 44px;
  object-fit: contain;
  border-radius: 10px;
  border: 1px solid var(--border-soft);
  background: var(--surface);
}

.account {
  display: flex;
  align-items: center;
  gap: 10px;
  margin: 0 0 20px;
  padding: 10px 12px;
  font-size: 14px;
  background: #f7f8fa;
  border: 1px solid var(--border-soft);
  border-radius: var(--radius);
}

.account-avatar {
  display: grid;
  place-items: center;
  flex: none;
  width: 32px;
  height: 32px;
  border-radius: 50%;
  background: color-mix(in srgb, var(--brand) 16%, #fff);
  color: var(--brand-ink);
  font-weight: 700;
}

.account-label { min-width: 0; overflow-wrap: anywhere; }

.account-label span { display: block; font-size: 12px; color: var(--muted); }

.scopes-title { margin: 0 0 8px; font-size: 14px; font-weight: 600; }

.scopes {
  margin: 0;
  padding: 0;
  list-style: none;
  border: 1px solid var(--border-soft);
  border-radius: var(--radius);
}

.scopes li {
  display: flex;
  gap: 10px;
  padding: 12px 14px;
}

.scopes li + li { border-top: 1px solid var(--border-soft); }

.scopes svg { flex: none; width: 18px; height: 18px; margin-top: 2px; color: var(--brand-ink); }

.scope-text { min-width: 0; }

.scope-description { display: block; font-size: 14px; overflow-wrap: anywhere; }

.scope-name {
  display: block;
  margin-top: 2px;
  font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace;
  font-size: 12px;
  color: var(--muted);
  overflow-wrap: anywhere;
}

.fine-print { margin: 16px 0 0; font-size: 13px; color: var(--muted); text-align: center; }

.qr { display: block; width: 192px; height: 192px; margin: 8px auto 12px; }

.qr svg { display: block; width: 100%; height: 100%; }

.secret {
  margin: 0 0 18px;
  padding: 10px 12px;
  border: 1px solid var(--border-soft);
  border-radius: 8px;
  background: #f6f7f9;
  font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace;
  font-size: 15px;
  letter-spacing: 0.04em;
  text-align: center;
  overflow-wrap: anywhere;
}

.visually-hidden {
  position: absolute;
  width: 1px;
  height: 1px;
  overflow: hidden;
  clip: rect(0 0 0 0);
  clip-path: inset(50%);
  white-space: nowrap;
}

@media (max-width: 480px) {
  body { font-size: 15px; }
  .shell { align-items: flex-start; padding: max(20px, 5vh) 12px 20px; }
  .card { padding: 28px 20px 24px; border-radius: 12px; }
  h1 { font-size: 22px; }
  .actions-split { flex-direction: column; }
}

@media (prefers-reduced-motion: reduce) {
  * { transition: none !important; }
}

/* WebAuthn (pages/webauthn.ts): the status line of a failed ceremony, and the "or" between two ways in. */
.webauthn-status { margin: 0 0 12px; color: #b42318; font-size: 0.9375rem; }
.webauthn-status[hidden] { display: none; }
.or { display: flex; align-items: center; gap: 12px; margin: 20px 0; color: #5b6472; font-size: 0.875rem; }
.or::before, .or::after { content: ""; flex: 1; border-top: 1px solid #dde1e7; }

@media (forced-colors: active) {
  .button-primary { border-color: ButtonText; }
}
`;
