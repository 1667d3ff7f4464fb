/**
 * The error page (an unknown client, a redirect URI that does not match: cases where the server must not
 * redirect) and informational pages such as "You are logged out".
 */
import { html, renderDocument, type PageContext } from './chrome.js';

const ERROR_ICON = html`<svg viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" d="M12 8v5m0 3.5v.01M10.3 3.9 2.4 17.5A2 2 0 0 0 4.1 20.5h15.8a2 2 0 0 0 1.7-3L13.7 3.9a2 2 0 0 0-3.4 0Z"/></svg>`;

export const INFO_ICON = html`<svg viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" d="M7 11V8a5 5 0 0 1 10 0v3M5 11h14a1 1 0 0 1 1 1v8a1 1 0 0 1-1 1H5a1 1 0 0 1-1-1v-8a1 1 0 0 1 1-1Zm7 4v2"/></svg>`;

const DONE_ICON = html`<svg viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" d="M20 6 9 17l-5-5"/></svg>`;

export function renderErrorPage(ctx: PageContext, view: { title: string; error: string; description: string; requestId?: string }): string {
  const content = html`<div class="status-icon status-error">${ERROR_ICON}</div>
<h1>${view.title}</h1>
<p class="lead">${view.description}</p>
<dl class="details" aria-label="Technical details">
<div><dt>Error</dt><dd>${view.error}</dd></div>
${view.requestId ? html`<div><dt>Request ID</dt><dd>${view.requestId}</dd></div>` : ''}
</dl>`;
  return renderDocument(ctx, { title: view.title, content });
}

/** A message page: `done` (the default) for something that worked, `problem` for something that did not (a dead link). */
export function renderMessagePage(ctx: PageContext, view: { title: string; message: string; linkUrl?: string; linkText?: string; tone?: 'done' | 'problem' }): string {
  const icon = view.tone === 'problem' ? html`<div class="status-icon status-error">${ERROR_ICON}</div>` : html`<div class="status-icon status-info">${DONE_ICON}</div>`;
  const content = html`${icon}
<h1>${view.title}</h1>
<p class="lead">${view.message}</p>
${view.linkUrl ? html`<div class="actions"><a class="button button-primary" href="${view.linkUrl}">${view.linkText ?? 'Continue'}</a></div>` : ''}`;
  return renderDocument(ctx, { title: view.title, content });
}
