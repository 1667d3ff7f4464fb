/** One delivery attempt of a CloudEvent to a stream's webhook: the body, the headers, the signature. */
import type { Sealer } from '../crypto/sealing.js';
import { postWebhook, type AttemptOutcome } from './destination.js';
import type { CloudEvent } from './outbox.js';
import { signWebhook } from './signing.js';
import { authorizationHeaders, signingSecretContext, type EventStream } from './streams.js';

/** Per attempt, as the issue says; a receiver should answer fast and work asynchronously. */
export const DELIVERY_TIMEOUT_MS = 10_000;

/** A stream's secrets, unsealed: its authorization header and its signing secret. */
export interface StreamSecrets {
  authorization: Record<string, string>;
  signingSecret: string;
}

/** Undefined when they do not open (sealed under another master key). */
export function unsealStreamSecrets(sealer: Sealer, stream: EventStream): StreamSecrets | undefined {
  try {
    return {
      authorization: authorizationHeaders(stream, sealer),
      signingSecret: sealer.unseal(stream.signingSecretSealed, signingSecretContext(stream.id)),
    };
  } catch {
    return undefined;
  }
}

export async function deliverOnce(
  secrets: StreamSecrets | undefined,
  stream: EventStream,
  event: CloudEvent,
  options: { allowInsecure: boolean; timeoutMs?: number },
): Promise<AttemptOutcome> {
  // Nothing can be sent, and nothing about the secrets is shown.
  if (!secrets) return { ok: false, errorMessage: 'The stream credentials cannot be read with the current master key', retryable: false, durationMs: 0 };
  const body = JSON.stringify({ ...event, a0stream: stream.id });
  const timestamp = Math.floor(Date.now() / 1000);
  return postWebhook({
    endpoint: stream.configuration.webhook_endpoint,
    headers: {
      ...secrets.authorization,
      'content-type': 'application/cloudevents+json',
      'user-agent': 'Gatehouse-Webhooks/1',
      'webhook-id': event.id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signWebhook(secrets.signingSecret, event.id, timestamp, body),
    },
    body,
    allowInsecure: options.allowInsecure,
    timeoutMs: options.timeoutMs ?? DELIVERY_TIMEOUT_MS,
  });
}
