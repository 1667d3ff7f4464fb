/**
 * The credentials of a /co/authenticate request, checked by their `credential_type` (reference C.8):
 *  - `password` (no realm: the tenant's default directory) and `…/password-realm` (realm = database connection)
 *    check the password; every PasswordLogin outcome maps to a row of the contract's error table;
 *  - `…/passwordless/otp` (realm = `email` or `sms` connection) checks a one-time code.
 */
import type { FastifyRequest } from 'fastify';
import { recordPasswordLogin } from '../../logs/login-outcomes.js';
import { authenticateWithPassword, databaseConnectionFor, type PasswordLogin } from '../../connections/database-users.js';
import { eventContextFrom } from '../../events/context.js';
import { InvalidRequest, type ProtocolError } from '../../http/errors.js';
import type { Services } from '../../services.js';
import type { Client } from '../../store/clients.js';
import { findConnectionByName, listEnabledClients } from '../../store/connections.js';
import type { User } from '../../store/users.js';
import { AccessDenied } from '../errors.js';
import { verifyPasswordlessOtp, type PasswordlessOtpOutcome } from '../passwordless/otp.js';
import { BlockedUser, PasswordLeaked, TooManyAttempts, UnsupportedCredentialType } from './errors.js';

export const PASSWORD = 'password';
export const PASSWORD_REALM = 'http://auth0.com/oauth/grant-type/password-realm';
export const PASSWORDLESS_OTP = 'http://auth0.com/oauth/grant-type/passwordless/otp';
const CREDENTIAL_TYPES: readonly string[] = [PASSWORD, PASSWORD_REALM, PASSWORDLESS_OTP];

export interface Credentials {
  credential_type: string;
  username: string;
  password?: string | undefined;
  otp?: string | undefined;
  realm?: string | undefined;
}

/** The request's credential type, if it is one this endpoint knows (checked before the fields it needs). */
export function checkCredentialType(credentials: Credentials): void {
  if (!CREDENTIAL_TYPES.includes(credentials.credential_type)) throw new UnsupportedCredentialType(credentials.credential_type);
}

export function passwordLoginError(result: Exclude<PasswordLogin, { outcome: 'ok' }>): ProtocolError {
  switch (result.outcome) {
    case 'wrong_credentials':
      return new AccessDenied('Wrong email or password.');
    case 'blocked':
      return new BlockedUser();
    case 'password_leaked':
      return new PasswordLeaked();
    case 'too_many_attempts':
      return new TooManyAttempts(result.reason);
  }
}

export function otpLoginError(result: Exclude<PasswordlessOtpOutcome, { outcome: 'ok' }>, strategy: 'email' | 'sms'): ProtocolError {
  switch (result.outcome) {
    case 'wrong_code':
      return new AccessDenied(strategy === 'sms' ? 'Wrong phone number or verification code.' : 'Wrong email or verification code.');
    case 'expired':
      return new AccessDenied('The verification code has expired or was tried too many times. Ask for a new one.');
    case 'blocked':
      return new BlockedUser();
    case 'signup_disabled':
      return new AccessDenied('Signups are not allowed for this connection.');
  }
}

function required(value: string | undefined, name: string, credentialType: string): string {
  if (!value) throw new InvalidRequest(`${name} is required with credential_type ${credentialType}`);
  return value;
}

async function passwordUser(services: Services, request: FastifyRequest, client: Client, credentials: Credentials): Promise<User> {
  const realm = credentials.credential_type === PASSWORD_REALM ? required(credentials.realm, 'realm', PASSWORD_REALM) : credentials.realm;
  const password = required(credentials.password, 'password', credentials.credential_type);
  const connection = await databaseConnectionFor(services, request.tenant, client.client_id, realm);
  if (!connection) {
    throw new InvalidRequest(realm ? `Unknown realm: ${realm.slice(0, 100)} is not a database connection enabled for this client` : 'No database connection is enabled for this client');
  }
  const result = await authenticateWithPassword(services, connection, credentials.username, password, request.ip);
  recordPasswordLogin(services, { request, client: { client_id: client.client_id, name: client.name }, connection, identifier: credentials.username, success: 'scoa' }, result);
  if (result.outcome !== 'ok') throw passwordLoginError(result);
  return result.user;
}

async function otpUser(services: Services, request: FastifyRequest, client: Client, credentials: Credentials): Promise<User> {
  const realm = required(credentials.realm, 'realm', PASSWORDLESS_OTP);
  const otp = required(credentials.otp, 'otp', PASSWORDLESS_OTP);
  const db = services.store.db;
  const connection = await findConnectionByName(db, request.tenant.id, realm);
  const strategy = connection?.strategy;
  if (!connection || (strategy !== 'email' && strategy !== 'sms') || !(await listEnabledClients(db, connection.id)).includes(client.client_id)) {
    throw new InvalidRequest(`Unknown realm: ${realm.slice(0, 100)} is not a passwordless connection enabled for this client`);
  }
  const result = await verifyPasswordlessOtp(
    services,
    request.tenant,
    { connection: connection.name, username: credentials.username, otp },
    // A code asked for by another client does not count here.
    { clientId: client.client_id, ip: request.ip, event: { ...eventContextFrom(request), client_id: client.client_id } },
  );
  if (result.outcome !== 'ok') throw otpLoginError(result, strategy);
  return result.user;
}

/** The user these credentials authenticate; any failure is thrown as its table row. */
export function authenticateCredentials(services: Services, request: FastifyRequest, client: Client, credentials: Credentials): Promise<User> {
  checkCredentialType(credentials);
  return credentials.credential_type === PASSWORDLESS_OTP ? otpUser(services, request, client, credentials) : passwordUser(services, request, client, credentials);
}
