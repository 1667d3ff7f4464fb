/**
 * A federated connection's secret options (client_secret, a private key) are write-only and sealed at rest
 * with the master key (crypto/sealing.ts), each bound to its connection and option name. Stored under
 * `<name>_sealed`; the plain option never reaches storage and is never shown.
 */
import type { Sealer } from '../crypto/sealing.js';
import type { Connection } from '../store/connections.js';
import type { DevelopmentKeyRing } from './development-keys.js';
import type { FederationStrategy, UpstreamConnection } from './strategy.js';

const sealedKey = (name: string) => `${name}_sealed`;
const context = (connectionId: string, name: string) => `connection_secret:${connectionId}:${name}`;

/**
 * `options` as stored: each secret sent is sealed; a secret not sent keeps its sealed value from `previous`,
 * so a client that reads the connection and writes it back does not wipe it.
 */
export function sealStrategySecrets(
  strategy: FederationStrategy,
  sealer: Sealer,
  connectionId: string,
  options: Record<string, unknown>,
  previous?: Record<string, unknown>,
): Record<string, unknown> {
  const out = { ...options };
  for (const name of strategy.secretOptions) {
    const plain = out[name];
    delete out[name];
    delete out[sealedKey(name)];
    if (typeof plain === 'string' && plain !== '') out[sealedKey(name)] = sealer.seal(plain, context(connectionId, name));
    else if (plain === undefined && typeof previous?.[sealedKey(name)] === 'string') out[sealedKey(name)] = previous[sealedKey(name)];
  }
  return out;
}

/** The options with every sealed secret put back in plain, for checks that need the whole set (PATCH). */
export function withSecretsOpened(strategy: FederationStrategy, sealer: Sealer, connectionId: string, stored: Record<string, unknown>, sent: Record<string, unknown>): Record<string, unknown> {
  const merged = { ...sent };
  for (const name of strategy.secretOptions) {
    const sealed = stored[sealedKey(name)];
    if (merged[name] === undefined && typeof sealed === 'string') merged[name] = sealer.unseal(sealed, context(connectionId, name));
  }
  return merged;
}

/** `options` as the Management API shows them. */
export function withoutStrategySecrets(strategy: FederationStrategy, options: Record<string, unknown>): Record<string, unknown> {
  const out = { ...options };
  for (const name of strategy.secretOptions) {
    delete out[name];
    delete out[sealedKey(name)];
  }
  return out;
}

/** The connection as a strategy reads it: options without sealed values, secrets opened, and the server's development keys for its preset. */
export function openUpstream(strategy: FederationStrategy, sealer: Sealer, connection: Connection, developmentKeys?: DevelopmentKeyRing): UpstreamConnection {
  const secrets: Record<string, string> = {};
  for (const name of strategy.secretOptions) {
    const sealed = connection.options[sealedKey(name)];
    if (typeof sealed === 'string') secrets[name] = sealer.unseal(sealed, context(connection.id, name));
  }
  const shared = developmentKeys?.[strategy.name];
  return { connection, options: withoutStrategySecrets(strategy, connection.options), secrets, ...(shared && { developmentKeys: shared }) };
}
