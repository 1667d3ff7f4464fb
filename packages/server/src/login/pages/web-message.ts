/**
 * response_mode=web_message: no UI at all. The response travels as a JSON data block (never executed) and the
 * target origin as a data attribute; the external script posts {type: "authorization_response", response} to
 * the framing window at exactly that origin. The lead serves it with hostedPageCsp(nonce, { frameAncestors }).
 */
import { ASSET_URLS } from '../assets.js';
import { html, raw } from './chrome.js';

/** JSON that cannot close its <script> element or open a comment: `<`, `>`, `&` and line separators escaped. */
function jsonForScriptElement(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function renderWebMessage(view: { targetOrigin: string; response: Record<string, string> }): string {
  // Only a real http(s) origin may receive tokens; a bad one is a bug in the caller, not something to post to.
  const origin = URL.canParse(view.targetOrigin) ? new URL(view.targetOrigin).origin : 'null';
  if (!/^https?:\/\//.test(origin)) {
    throw new TypeError(`web_message target is not an origin: ${JSON.stringify(view.targetOrigin)}`);
  }
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="robots" content="noindex, nofollow">
<link rel="icon" href="data:,">
<title>Authorization response</title>
<script type="application/json" id="authorization-response">${raw(jsonForScriptElement(view.response))}</script>
<script src="${ASSET_URLS.webMessage}" defer></script>
</head>
<body data-target-origin="${origin}">
</body>
</html>
`.value;
}
