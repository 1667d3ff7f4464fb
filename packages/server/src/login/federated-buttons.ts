/**
 * The hosted login page's buttons for upstream identity providers: every federated connection enabled for the
 * application, each starting at GET /u/login/federated, which records the choice on the login transaction and
 * sends the browser upstream.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LOGIN_PATH, sendAuthorizationError } from '../auth-api/authorize/complete.js';
import { usesDevelopmentKeys } from '../federation/silent-authentication.js';
import { isFederated, redirectUpstream } from '../federation/start.js';
import { InvalidRequest, ProtocolError } from '../http/errors.js';
import { documentedOnly, frontChannelParameters } from '../http/openapi.js';
import { htmlPage, redirect } from '../http/responses.js';
import type { App, Services } from '../services.js';
import { findConnectionByName, listEnabledClientsByConnection, listEnabledClients } from '../store/connections.js';
import { sendErrorPage } from './error-page.js';
import { safeImageUrl } from './pages/chrome.js';
import { PAGE_TAGS } from './documentation.js';
import { loadStep } from './step.js';
import { saveLoginTransactionRequest } from './transactions.js';

export const FEDERATED_LOGIN_PATH = `${LOGIN_PATH}/federated`;

export interface FederatedButton {
  label: string;
  url: string;
  /** The connection's `icon_url` (https or a data: image only). */
  icon?: string;
}

/** Every federated connection enabled for the client, unless it says `show_as_button: false`. */
export async function federatedButtons(services: Services, tenantId: string, clientId: string, transactionId: string): Promise<FederatedButton[]> {
  const connections = (await services.configCache.connections(tenantId)).filter((c) => isFederated(c) && c.show_as_button !== false);
  if (connections.length === 0) return [];
  const enabled = await listEnabledClientsByConnection(services.store.db, tenantId);
  return connections
    .filter((c) => enabled.get(c.id)?.includes(clientId))
    .map((c) => {
      const icon = safeImageUrl(typeof c.options.icon_url === 'string' ? c.options.icon_url : undefined);
      return {
        // The page says so: these keys are the server's, for trying things out.
        label: `${c.display_name || c.name}${usesDevelopmentKeys(c) ? ' (development keys)' : ''}`,
        url: `${FEDERATED_LOGIN_PATH}?${new URLSearchParams({ state: transactionId, connection: c.name }).toString()}`,
        ...(icon && { icon }),
      };
    });
}

async function startFromPage(request: FastifyRequest, reply: FastifyReply, services: Services): Promise<FastifyReply> {
  const step = await loadStep(request, reply, services, 'GET');
  if (!step) return reply;
  const name = (request.query as Record<string, unknown>).connection;
  const db = services.store.db;
  const connection = typeof name === 'string' && name.length <= 200 ? await findConnectionByName(db, request.tenant.id, name) : undefined;
  if (!connection || !isFederated(connection) || !(await listEnabledClients(db, connection.id)).includes(step.client.client_id)) {
    return sendErrorPage(reply, request, new InvalidRequest('This way of signing in is not available for this application. Go back and choose another.'));
  }
  const { transaction } = step;
  transaction.request = { ...transaction.request, connection: connection.name };
  await saveLoginTransactionRequest(services, transaction);
  try {
    return await redirectUpstream(request, reply, services, transaction, connection, false);
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    return sendAuthorizationError(reply, request, step.client, transaction.request, error, false);
  }
}

export function registerFederatedButtons(app: App, services: Services): void {
  app.get(FEDERATED_LOGIN_PATH, {
    config: { rateLimit: { bucket: 'authorize' } },
    schema: {
      tags: PAGE_TAGS,
      summary: "Continue with an upstream identity provider (the login page's buttons)",
      ...documentedOnly({ querystring: frontChannelParameters({ state: 'The login transaction', connection: 'The federated connection' }, ['state', 'connection']) }),
      response: {
        200: htmlPage('The OAuth error delivered to the application in its response mode (form_post, web_message), when the upstream cannot be used'),
        302: redirect("To the upstream identity provider; or to the application's redirect URI with temporarily_unavailable when the upstream cannot be used"),
        400: htmlPage('The error page: a stale login transaction, or a connection that is not a federated one enabled for the application'),
      },
    },
    handler: (request, reply) => startFromPage(request, reply, services),
  });
}
