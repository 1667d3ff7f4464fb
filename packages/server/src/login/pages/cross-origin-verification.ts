/**
 * The cross-origin verification page (reference C.8, protocol 5.4): shown by /authorize?login_ticket when the
 * browser did not send the cookie of /co/authenticate. Its external script frames the app's cross_origin_loc
 * with `#origin=<this server's origin>`, answers the frame's `{type:"ready"}` with
 * `{type:"co_verifier_request", request:{id:<co_id>}}`, and posts the `co_verifier` it gets back to /co/verify
 * with the transaction's `state`. The data travels in attributes; the CSP allows framing that one origin.
 */
import { ASSET_URLS } from '../assets.js';
import { html, renderDocument, type PageContext } from './chrome.js';

export interface CrossOriginVerificationView {
  /** The co_id of the ticket being verified. */
  coId: string;
  /** The app's verification page, already carrying `#origin=…`. */
  frameUrl: string;
  /** Where the frame's messages must come from (the origin of frameUrl). */
  appOrigin: string;
  action: string;
  state: string;
}

export function renderCrossOriginVerification(ctx: PageContext, view: CrossOriginVerificationView): string {
  const content = html`<div id="co-verification" data-co-id="${view.coId}" data-app-origin="${view.appOrigin}" data-frame-src="${view.frameUrl}">
<h1>Signing you in</h1>
<p class="lead">Checking that this browser started the sign-in. This takes a moment.</p>
<noscript><p class="lead">This step needs JavaScript. Enable it, then go back to the application and sign in again.</p></noscript>
<form method="post" action="${view.action}" data-co-verify>
<input type="hidden" name="verifier" value="">
<input type="hidden" name="state" value="${view.state}">
</form>
</div>
<script src="${ASSET_URLS.crossOriginVerification}" defer></script>`;
  return renderDocument(ctx, { title: 'Signing you in', content });
}
