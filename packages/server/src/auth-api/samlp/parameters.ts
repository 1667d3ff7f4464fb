/** The parts every /samlp endpoint starts with: its parameters, the raw query a signature covers, the application. */
import type { FastifyRequest } from 'fastify';
import { MAX_SAML_PARAMETER_CHARS, SamlMessageError } from '../../federation/saml-safety.js';
import { InvalidRequest } from '../../http/errors.js';
import type { Services } from '../../services.js';
import type { Client } from '../../store/clients.js';
import { samlSettings, type SamlSettings } from './addon.js';

const MAX_RELAY_STATE = 1024;

/** One string per parameter; SAML messages may be long, everything else is short. */
export function readSamlParameters(source: unknown): Record<string, string> {
  const params: Record<string, string> = {};
  if (!source || typeof source !== 'object') return params;
  for (const [name, value] of Object.entries(source as Record<string, unknown>)) {
    if (typeof value !== 'string') throw new SamlMessageError(`The parameter ${name.slice(0, 50)} must be sent once.`);
    const limit = name === 'SAMLRequest' || name === 'SAMLResponse' ? MAX_SAML_PARAMETER_CHARS : name === 'RelayState' ? MAX_RELAY_STATE : 4000;
    if (value.length > limit) throw new SamlMessageError(name === 'RelayState' ? 'The RelayState is too long.' : 'The SAML message is too large.');
    params[name] = value;
  }
  return params;
}

export function rawQueryOf(request: FastifyRequest): string {
  const url = request.raw.url ?? '';
  const mark = url.indexOf('?');
  return mark < 0 ? '' : url.slice(mark + 1);
}

/** The application and its samlp settings, or a refusal. */
export async function samlApplication(services: Services, request: FastifyRequest, clientId: string): Promise<{ client: Client; settings: SamlSettings }> {
  const client = /^[A-Za-z0-9_-]{1,64}$/.test(clientId) ? await services.configCache.client(request.tenant.id, clientId) : undefined;
  if (!client) throw new InvalidRequest('Unknown application.', 'invalid_client');
  const settings = samlSettings(client);
  if (!settings) throw new InvalidRequest('This application is not set up for SAML (it has no samlp add-on).', 'invalid_client');
  return { client, settings };
}

