/**
 * Silent authentication in a hidden iframe (`response_mode=web_message`, reference §5.1): the server's page
 * posts `{type: 'authorization_response', response}` to this window. Only a message from the server's origin
 * and from that iframe, carrying the state we sent, is accepted; anything else is ignored until the timeout.
 */
export interface WebMessageResponse {
  [key: string]: string | undefined;
}

export function runWebMessage(url: string, serverOrigin: string, state: string, timeoutMs: number): Promise<WebMessageResponse | 'timeout'> {
  return new Promise((resolve) => {
    const iframe = document.createElement('iframe');
    iframe.style.display = 'none';
    iframe.setAttribute('aria-hidden', 'true');
    const finish = (result: WebMessageResponse | 'timeout') => {
      window.removeEventListener('message', onMessage);
      clearTimeout(timer);
      iframe.remove();
      resolve(result);
    };
    const onMessage = (event: MessageEvent) => {
      const data = event.data as { type?: unknown; response?: WebMessageResponse } | null;
      if (event.origin !== serverOrigin || event.source !== iframe.contentWindow) return;
      if (!data || data.type !== 'authorization_response' || !data.response || data.response.state !== state) return;
      finish(data.response);
    };
    window.addEventListener('message', onMessage);
    const timer = setTimeout(() => finish('timeout'), timeoutMs);
    iframe.src = url;
    document.body.appendChild(iframe);
  });
}
