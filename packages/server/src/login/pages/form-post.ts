/**
 * response_mode=form_post (OAuth 2.0 Form Post Response Mode): the response as hidden fields of a form that
 * posts to the client's redirect URI. An external script submits it at once; the Continue button stays visible
 * for browsers without script (and for a script that failed to load).
 * The lead serves it with hostedPageCsp(nonce, { formAction: [clientOrigin] }) and no caching.
 */
import { ASSET_URLS } from '../assets.js';
import { html } from './chrome.js';

export function renderFormPost(view: { action: string; fields: Record<string, string> }): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<link rel="icon" href="data:,">
<title>Continue</title>
<link rel="stylesheet" href="${ASSET_URLS.stylesheet}">
<script src="${ASSET_URLS.formPost}" defer></script>
</head>
<body>
<main class="shell">
<div class="card">
<form method="post" action="${view.action}" data-auto-submit>
${Object.entries(view.fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
<h1>Signing you in</h1>
<p class="lead">Taking you back to the application. If nothing happens, press Continue.</p>
<div class="actions"><button class="button button-primary" type="submit">Continue</button></div>
</form>
</div>
</main>
</body>
</html>
`.value;
}
