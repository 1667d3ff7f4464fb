/**
 * Branding of the hosted pages (/branding): logo, primary colour and page background, with a live preview of
 * the login page drawn from the values being typed, before they are saved. The preview is a mock laid out as
 * login/pages/login.ts is, with the same colour rules as login/pages/chrome.ts (text on the button white or
 * near-black, whichever contrasts more; a default colour for anything that is not #rgb/#rrggbb), because the
 * server has no preview endpoint and its pages may not be framed.
 */
import { useEffect, useState, type CSSProperties } from 'react';
import type { ManagementApi } from '../api.js';
import { TextField } from '../components/fields.js';
import { FormCard } from '../components/FormCard.js';
import { ErrorNotice, useLoad } from '../ui.js';

interface BrandingSettings {
  colors?: { primary?: string; page_background?: string };
  logo_url?: string;
}

const DEFAULT_PRIMARY = '#3559e0';
const DEFAULT_BACKGROUND = '#f3f4f7';
const HEX = /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i;

/** #rgb or #rrggbb → #rrggbb in lower case; anything else → undefined. */
export function fullHex(value: string): string | undefined {
  const v = value.trim();
  if (!HEX.test(v)) return undefined;
  return (v.length === 4 ? `#${[...v.slice(1)].map((d) => d + d).join('')}` : v).toLowerCase();
}

function luminance(hex: string): number {
  const channel = (at: number) => {
    const c = parseInt(hex.slice(at, at + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

function contrast(a: string, b: string): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

/** The text colour on the brand colour, as the hosted pages choose it. */
export function onBrand(brand: string): string {
  return contrast(brand, '#ffffff') >= contrast(brand, '#111418') ? '#ffffff' : '#111418';
}

function safeLogo(url: string): string | undefined {
  try {
    return new URL(url).protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

function Preview({ name, primary, background, logo }: { name: string; primary: string; background: string; logo: string }) {
  const brand = fullHex(primary) ?? DEFAULT_PRIMARY;
  const page = fullHex(background) ?? DEFAULT_BACKGROUND;
  const logoUrl = safeLogo(logo.trim());
  const style = { '--preview-brand': brand, '--preview-on-brand': onBrand(brand), '--preview-page': page } as CSSProperties;
  return (
    <figure className="login-preview" style={style} data-testid="branding-preview">
      {/* A picture of the page, not a form: hidden from assistive technology, nothing in it can be focused. */}
      <div className={fullHex(background) ? 'login-preview-page plain' : 'login-preview-page'} aria-hidden="true">
        <div className="login-preview-card">
          {logoUrl ? <img className="login-preview-logo" src={logoUrl} alt="" /> : <span className="login-preview-mark">{[...name.trim()][0]?.toUpperCase() ?? '?'}</span>}
          <p className="login-preview-title">Welcome</p>
          <p className="login-preview-lead">Log in to {name} to continue.</p>
          <span className="login-preview-label">Email address</span>
          <span className="login-preview-input" />
          <span className="login-preview-label">Password</span>
          <span className="login-preview-input" />
          <span className="login-preview-button" data-testid="preview-button">
            Continue
          </span>
        </div>
      </div>
      <figcaption>
        Preview of the login page: button {brand}, page {page}
        {logoUrl ? ', with the logo' : ', with the tenant’s initial (no logo)'}.
      </figcaption>
    </figure>
  );
}

/** A colour as a picker and as text, kept in step (the text accepts #rgb too; empty means the default). */
function ColorField({ label, value, onValue, fallback }: { label: string; value: string; onValue: (value: string) => void; fallback: string }) {
  return (
    <div className="row color-field">
      <TextField grow label={label} value={value} onValue={onValue} pattern="#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})" placeholder={fallback} hint={`#rrggbb; empty for the default (${fallback}).`} />
      <input type="color" aria-label={`${label}: picker`} value={fullHex(value) ?? fallback} onChange={(e) => onValue(e.target.value)} />
    </div>
  );
}

export function Branding({ api, tenantName }: { api: ManagementApi; tenantName: string }) {
  const loaded = useLoad(() => api.get<BrandingSettings>('/branding'), []);
  const [logo, setLogo] = useState('');
  const [primary, setPrimary] = useState('');
  const [background, setBackground] = useState('');
  useEffect(() => {
    const b = loaded.data;
    if (!b) return;
    setLogo(b.logo_url ?? '');
    setPrimary(b.colors?.primary ?? '');
    setBackground(b.colors?.page_background ?? '');
  }, [loaded.data]);
  return (
    <>
      <h1>Branding</h1>
      <p className="lead">How the hosted login, sign-up and MFA pages look to the people who sign in.</p>
      {loaded.error && !loaded.data && <ErrorNotice message={loaded.error} />}
      {loaded.loading && !loaded.data && <p className="loading">Loading…</p>}
      {loaded.data && (
        <div className="split">
          <FormCard
            title="Look"
            submitLabel="Save branding"
            onSubmit={async () => {
              // Empty clears a setting (null), so the pages fall back to their defaults.
              loaded.show(await api.request<BrandingSettings>('PATCH', '/branding', {
                logo_url: logo.trim() || null,
                colors: { primary: primary.trim() || null, page_background: background.trim() || null },
              }));
              return 'Saved: the hosted pages use it from the next page load.';
            }}
          >
            <TextField label="Logo URL" type="url" pattern="https://.*" placeholder="https://example.com/logo.png" hint="https only; shown at the top of the pages." value={logo} onValue={setLogo} />
            <ColorField label="Primary colour" value={primary} onValue={setPrimary} fallback={DEFAULT_PRIMARY} />
            <ColorField label="Page background" value={background} onValue={setBackground} fallback={DEFAULT_BACKGROUND} />
          </FormCard>
          <Preview name={tenantName} primary={primary} background={background} logo={logo} />
        </div>
      )}
    </>
  );
}
