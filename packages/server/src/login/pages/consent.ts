/**
 * The consent page a third-party client gets before its first authorization: who is signed in, which
 * application asks, and for what. Two submit buttons post `decision=accept` or `decision=deny`; Accept comes
 * first in the markup (Enter and the top of a narrow screen pick it) and is shown on the right on wide screens.
 */
import { formGuards, html, renderDocument, safeImageUrl, type PageContext } from './chrome.js';

const CHECK = html`<svg viewBox="0 0 20 20" aria-hidden="true" focusable="false"><path fill="currentColor" d="M8.333 14.167a.83.83 0 0 1-.589-.244l-3.334-3.334a.833.833 0 1 1 1.179-1.178l2.744 2.744 6.078-6.078a.833.833 0 1 1 1.178 1.179l-6.667 6.667a.83.83 0 0 1-.589.244Z"/></svg>`;

export function renderConsentPage(
  ctx: PageContext,
  view: {
    action: string;
    csrfToken: string;
    transaction: string;
    clientName: string;
    clientLogoUrl?: string;
    userLabel: string;
    audienceName?: string;
    scopes: { name: string; description: string }[];
  },
): string {
  const clientLogo = safeImageUrl(view.clientLogoUrl);
  const initial = [...view.userLabel.trim()][0]?.toUpperCase() ?? '?';
  const target = view.audienceName ? html` to <strong>${view.audienceName}</strong>` : html` to your account`;
  const content = html`${clientLogo ? html`<div class="consent-apps"><img class="client-logo" src="${clientLogo}" alt="" width="44" height="44"></div>` : ''}
<h1>Authorize ${view.clientName}</h1>
<p class="lead"><strong>${view.clientName}</strong> is asking for access${target}.</p>
<div class="account"><span class="account-avatar" aria-hidden="true">${initial}</span><span class="account-label"><span>Signed in as</span>${view.userLabel}</span></div>
${
  view.scopes.length > 0
    ? html`<p class="scopes-title" id="scopes-title">This will allow ${view.clientName} to:</p>
<ul class="scopes" aria-labelledby="scopes-title">${view.scopes.map(
        (scope) =>
          html`<li>${CHECK}<span class="scope-text"><span class="scope-description">${scope.description || scope.name}</span><span class="scope-name">${scope.name}</span></span></li>`,
      )}</ul>`
    : ''
}
<form method="post" action="${view.action}">
${formGuards(view.csrfToken, view.transaction)}
<div class="actions actions-split">
<button class="button button-primary" type="submit" name="decision" value="accept">Accept</button>
<button class="button button-secondary" type="submit" name="decision" value="deny">Decline</button>
</div>
</form>
<p class="fine-print">Accept only if you trust ${view.clientName} with this access.</p>`;
  return renderDocument(ctx, { title: `Authorize ${view.clientName}`, content, wide: true });
}
