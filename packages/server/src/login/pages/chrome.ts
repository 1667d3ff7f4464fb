/**
 * What every hosted page shares: the Content-Security-Policy, the tenant's branding (name, logo, primary colour)
 * and the document around a page's card. Colours and logos come from tenant settings, so they are validated here
 * rather than trusted: a colour that is not `#rgb`/`#rrggbb` falls back to the default, a logo that is not an
 * https (or data:image) URL is replaced by a monogram.
 */
import { ASSET_URLS } from '../assets.js';
import { escapeHtml, html, raw, type HtmlValue, type SafeHtml } from './html.js';

export { escapeHtml, html, raw, SafeHtml, type HtmlValue } from './html.js';

export interface Branding {
  name: string;
  logoUrl?: string;
  primaryColor?: string;
  /** /api/v2/branding `colors.page_background`, `favicon_url` and `font.url`. */
  pageBackground?: string;
  faviconUrl?: string;
  fontUrl?: string;
}

export interface PageContext {
  branding: Branding;
  cspNonce: string;
  /** The page's language (login/texts.ts); English when not given. */
  language?: string;
}

export const DEFAULT_PRIMARY_COLOR = '#3559e0';

const NONCE = /^[A-Za-z0-9+/_-]{16,}={0,2}$/;

/** A CSP source for an origin or URL the caller gives (a client's callback or web origin); anything else throws. */
function cspSource(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TypeError(`Not a URL for a CSP source: ${JSON.stringify(value)}`);
  }
  if (url.protocol === 'https:' || url.protocol === 'http:') return url.origin;
  // Native apps' custom schemes (com.example.app:) can be a form_post target; allow the scheme alone.
  if (/^[a-z][a-z0-9+.-]*:$/.test(url.protocol)) return url.protocol;
  throw new TypeError(`Not a URL for a CSP source: ${JSON.stringify(value)}`);
}

/** The Content-Security-Policy for a hosted page; options widen form-action (form_post to a client) or frame-ancestors (web_message). */
export function hostedPageCsp(nonce: string, options: { formAction?: string[]; frameAncestors?: string[]; fontSrc?: string } = {}): string {
  // The nonce lands inside the header; a malformed one could inject directives.
  if (!NONCE.test(nonce)) throw new TypeError('CSP nonce must be base64 of at least 12 random bytes');
  const formAction = ["'self'", ...new Set((options.formAction ?? []).map(cspSource))];
  const frameAncestors = [...new Set((options.frameAncestors ?? []).map(cspSource))];
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'self' 'nonce-${nonce}'`,
    "img-src 'self' https: data:",
    // The tenant's brand font (an https URL from /api/v2/branding), from its origin only.
    ...(options.fontSrc ? [`font-src ${cspSource(options.fontSrc)}`] : []),
    `form-action ${formAction.join(' ')}`,
    `frame-ancestors ${frameAncestors.length > 0 ? frameAncestors.join(' ') : "'none'"}`,
    "base-uri 'none'",
  ].join('; ');
}

const HEX_COLOR = /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i;

/** The tenant's primary colour as #rrggbb (lower case) if it is a strict `#rgb`/`#rrggbb`, else the default. */
export function brandColor(value: string | undefined): string {
  const color = value !== undefined && HEX_COLOR.test(value) ? value.toLowerCase() : DEFAULT_PRIMARY_COLOR;
  return color.length === 4 ? `#${[...color.slice(1)].map((digit) => digit + digit).join('')}` : color;
}

type Rgb = [number, number, number];

function rgbOf(hex: string): Rgb {
  return [1, 3, 5].map((at) => parseInt(hex.slice(at, at + 2), 16)) as Rgb;
}

function hexOf(rgb: Rgb): string {
  return `#${rgb.map((channel) => Math.round(channel).toString(16).padStart(2, '0')).join('')}`;
}

/** WCAG 2 relative luminance. */
function luminance([r, g, b]: Rgb): number {
  const linear = (channel: number) => {
    const c = channel / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
}

export function contrastRatio(a: string, b: string): number {
  const [light, dark] = [luminance(rgbOf(a)), luminance(rgbOf(b))].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

/**
 * The CSS custom properties a brand colour needs: the colour itself (button background), the text colour on it
 * (white or near-black, whichever contrasts more), and an "ink" shade dark enough for links and focus rings on
 * white (WCAG AA 4.5:1): a pale brand colour is darkened towards black until it passes.
 */
export function brandPalette(primaryColor: string | undefined): { brand: string; onBrand: string; ink: string } {
  const brand = brandColor(primaryColor);
  const onBrand = contrastRatio(brand, '#ffffff') >= contrastRatio(brand, '#111418') ? '#ffffff' : '#111418';
  const rgb = rgbOf(brand);
  let ink = brand;
  for (let factor = 0.9; contrastRatio(ink, '#ffffff') < 4.5 && factor > 0; factor -= 0.1) {
    ink = hexOf(rgb.map((channel) => channel * factor) as Rgb);
  }
  return { brand, onBrand, ink };
}

/** Logos are shown only from https: or inline raster/SVG data: URLs (what the CSP's img-src allows anyway). */
export function safeImageUrl(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (/^data:image\/(?:png|gif|jpeg|webp|svg\+xml);base64,[A-Za-z0-9+/=]+$/.test(value)) return value;
  try {
    return new URL(value).protocol === 'https:' ? value : undefined;
  } catch {
    return undefined;
  }
}

function initialOf(name: string): string {
  return [...name.trim()][0]?.toUpperCase() ?? '?';
}

/**
 * The tab icon: the tenant's logo, else its monogram drawn in the brand colour. Always inline, so the browser
 * does not ask for /favicon.ico (which no tenant has).
 */
function favicon(branding: Branding, brand: string, onBrand: string): string {
  const icon = safeImageUrl(branding.faviconUrl);
  if (icon) return icon;
  const logo = safeImageUrl(branding.logoUrl);
  if (logo) return logo;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="8" fill="${brand}"/><text x="16" y="22" font-family="system-ui,sans-serif" font-size="18" font-weight="700" text-anchor="middle" fill="${onBrand}">${escapeHtml(initialOf(branding.name))}</text></svg>`;
  return `data:image/svg+xml,${encodeURIComponent(svg)}`;
}

function brandHeader(branding: Branding): SafeHtml {
  const logo = safeImageUrl(branding.logoUrl);
  // A logo usually carries the name already, so it stands alone (named by its alt text); without one, a
  // monogram in the brand colour sits above the name.
  if (logo) return html`<header class="brand"><img class="brand-logo" src="${logo}" alt="${branding.name}"></header>`;
  return html`<header class="brand"><span class="brand-mark" aria-hidden="true">${initialOf(branding.name)}</span><span class="brand-name">${branding.name}</span></header>`;
}

/** A status line above a form: errors are announced to screen readers as they appear. */
export function alert(kind: 'error' | 'success', message: string | undefined): SafeHtml {
  if (!message) return html``;
  const icon =
    kind === 'error'
      ? html`<svg class="alert-icon" viewBox="0 0 20 20" aria-hidden="true" focusable="false"><path fill="currentColor" d="M10 1.667a8.333 8.333 0 1 0 0 16.666 8.333 8.333 0 0 0 0-16.666Zm0 12.5a.833.833 0 1 1 0-1.667.833.833 0 0 1 0 1.667Zm.833-3.334a.833.833 0 0 1-1.666 0v-5a.833.833 0 0 1 1.666 0v5Z"/></svg>`
      : html`<svg class="alert-icon" viewBox="0 0 20 20" aria-hidden="true" focusable="false"><path fill="currentColor" d="M10 1.667a8.333 8.333 0 1 0 0 16.666 8.333 8.333 0 0 0 0-16.666Zm3.923 6.423-4.583 4.583a.833.833 0 0 1-1.18 0l-2.083-2.083a.833.833 0 1 1 1.18-1.18l1.493 1.494 3.993-3.994a.833.833 0 1 1 1.18 1.18Z"/></svg>`;
  return html`<div class="alert alert-${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${icon}<p>${message}</p></div>`;
}

/** The hidden fields every hosted form carries. */
export function formGuards(csrfToken: string, transaction: string | undefined): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${csrfToken}"><input type="hidden" name="transaction" value="${transaction ?? ''}">`;
}

/** A whole hosted page: the document, the stylesheet, the brand colour under the nonce, and the card. */
/** The brand font, when it is an https URL (what the CSP's font-src allows), else none. */
export function safeFontUrl(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  try {
    return new URL(value).protocol === 'https:' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The page background and brand font, as CSS under the nonce; values are checked, never passed through. */
function brandExtras(branding: Branding): string {
  const background = branding.pageBackground !== undefined && HEX_COLOR.test(branding.pageBackground) ? `body{background:${branding.pageBackground}}` : '';
  const font = safeFontUrl(branding.fontUrl);
  // JSON.stringify quotes the URL for CSS; `<` cannot end the style element since the URL parsed as https.
  const face = font ? `@font-face{font-family:"Brand";src:url(${JSON.stringify(font).replace(/</g, '%3C')})}body{font-family:"Brand",system-ui,sans-serif}` : '';
  return background + face;
}

export function renderDocument(ctx: PageContext, page: { title: string; content: HtmlValue; wide?: boolean }): string {
  const { brand, onBrand, ink } = brandPalette(ctx.branding.primaryColor);
  const tenantName = ctx.branding.name;
  return html`<!doctype html>
<html lang="${ctx.language ?? 'en'}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="color-scheme" content="light">
<title>${page.title} · ${tenantName}</title>
<link rel="icon" href="${favicon(ctx.branding, brand, onBrand)}">
<link rel="stylesheet" href="${ASSET_URLS.stylesheet}">
<style nonce="${ctx.cspNonce}">:root{--brand:${brand};--on-brand:${onBrand};--brand-ink:${ink}}${raw(brandExtras(ctx.branding))}</style>
</head>
<body>
<main class="shell">
<div class="card${page.wide ? ' card-wide' : ''}">
${brandHeader(ctx.branding)}
${page.content}
</div>
</main>
</body>
</html>
`.value;
}
