/** `connection` names a connection enabled for the client; the login then goes straight to it. */
import { InvalidRequest } from '../../../http/errors.js';
import { findConnectionByName, listEnabledClients } from '../../../store/connections.js';
import { clientOf, type AuthorizeCheck } from './context.js';

export const checkConnection: AuthorizeCheck = async (context) => {
  const name = context.params.connection;
  if (name === undefined || name === '') return;
  const client = clientOf(context);
  const db = context.services.store.db;
  const connection = name.length <= 200 ? await findConnectionByName(db, context.tenant.id, name) : undefined;
  if (!connection || !(await listEnabledClients(db, connection.id)).includes(client.client_id)) {
    throw new InvalidRequest(`The connection is not enabled for this application: ${name.slice(0, 100)}`);
  }
  context.request.connection = connection.name;
};
