/**
 * Popup login (reference §2.7, §5.2): the opener opens /authorize in a popup; the server redirects the popup
 * to the app's redirect URI, whose page calls `popup.callback()`; that page validates the result (it shares
 * the opener's origin, hence its transaction storage) and posts it to the opener. The opener accepts a
 * message only from that popup and from the redirect URI's origin, and reports a closed popup.
 */
import type { SvcError } from '../helpers/errors.js';

export const POPUP_MESSAGE = 'svc:popup_response';

export interface PopupMessage {
  type: typeof POPUP_MESSAGE;
  error?: SvcError;
  result?: unknown;
}

export function openPopup(options: { width?: number; height?: number } = {}): Window | null {
  const width = options.width ?? 500;
  const height = options.height ?? 600;
  const left = Math.max(0, (window.screenX ?? 0) + (window.outerWidth - width) / 2);
  const top = Math.max(0, (window.screenY ?? 0) + (window.outerHeight - height) / 2);
  return window.open('about:blank', 'svc_popup', `width=${width},height=${height},left=${left},top=${top}`);
}

export function awaitPopup(popup: Window, expectedOrigin: string): Promise<PopupMessage> {
  return new Promise((resolve) => {
    const finish = (message: PopupMessage) => {
      window.removeEventListener('message', onMessage);
      clearInterval(poll);
      resolve(message);
    };
    const onMessage = (event: MessageEvent) => {
      const data = event.data as PopupMessage | null;
      if (event.source !== popup || event.origin !== expectedOrigin || !data || data.type !== POPUP_MESSAGE) return;
      popup.close();
      finish(data);
    };
    window.addEventListener('message', onMessage);
    const poll = setInterval(() => {
      if (popup.closed) finish({ type: POPUP_MESSAGE, error: { original: 'User closed the popup window', code: null, description: null } });
    }, 500);
  });
}
