/**
 * The client keys a preset connection (google-oauth2, github…) uses upstream: its own `client_id` and
 * `client_secret` when it has both, else the server's development keys for that provider (the reference's
 * development-keys mode), else none, which the person is told as `access_denied`. `asStrategy` turns the preset's
 * options into those of the strategy it is a preset of (oidc, oauth2).
 */
import type { UpstreamConnection } from './strategy.js';
import { UpstreamError } from './upstream-error.js';

export function withPresetKeys(provider: string, upstream: UpstreamConnection, asStrategy: (options: Record<string, unknown>) => Record<string, unknown>): UpstreamConnection {
  if (typeof upstream.options.client_id === 'string' && upstream.secrets.client_secret) return { ...upstream, options: asStrategy(upstream.options) };
  const shared = upstream.developmentKeys;
  if (!shared) {
    throw new UpstreamError(
      'access_denied',
      `The connection ${upstream.connection.name} has no client_id and client_secret of its own (development-keys mode), and this server has no development keys for ${provider}. Its administrator must set the connection's client_id and client_secret.`,
    );
  }
  return { ...upstream, options: asStrategy({ ...upstream.options, client_id: shared.client_id }), secrets: { ...upstream.secrets, client_secret: shared.client_secret ?? '' } };
}
