/**
 * The log event of a password login, whichever door it came through (hosted login page, password grants,
 * /co/authenticate): `fu` for an identifier no user has, `fp` for a wrong password, `limit_wc` when brute-force
 * protection refuses the identifier, `limit_mu` for a throttled IP, `pwd_leak` for a breached password, `f` for a
 * blocked user, and on success the caller's code (`s`, `scoa`), or none when the caller writes its own (the
 * password grants write `sepft`). `user_name` is the identifier as typed; the password never reaches here.
 */
import type { FastifyRequest } from 'fastify';
import type { PasswordLogin } from '../connections/database-users.js';
import type { Services } from '../services.js';
import type { Connection } from '../store/connections.js';
import type { LogEventType } from './catalogue.js';
import type { LogFacts } from './log-event.js';
import { noteForLog } from './request-notes.js';

export interface PasswordLoginLog {
  request: FastifyRequest;
  client: { client_id: string; name?: string | undefined };
  connection: Connection;
  identifier: string;
  /** The code of a success, or null when the caller logs the success itself. */
  success: LogEventType | null;
}

export function recordPasswordLogin(services: Services, login: PasswordLoginLog, result: PasswordLogin): void {
  const { request, client, connection } = login;
  const base: Omit<LogFacts, 'type'> = {
    client,
    connection: { id: connection.id, name: connection.name, strategy: connection.strategy },
    user_name: login.identifier.slice(0, 320),
  };
  let facts: LogFacts | undefined;
  switch (result.outcome) {
    case 'ok':
      noteForLog(request, { ...base, user_id: result.user.user_id, user_name: result.user.email ?? result.user.username ?? base.user_name });
      if (login.success) facts = { ...base, type: login.success, user_id: result.user.user_id };
      break;
    case 'wrong_credentials':
      facts = result.userId
        ? { ...base, type: 'fp', user_id: result.userId, description: 'Wrong email or password.' }
        : { ...base, type: 'fu', description: 'Wrong email or password.' };
      break;
    case 'blocked':
      facts = { ...base, type: 'f', user_id: result.userId, description: 'user is blocked' };
      break;
    case 'too_many_attempts':
      facts = result.reason === 'brute_force'
        ? { ...base, type: 'limit_wc', description: 'Too many failed login attempts: the account is blocked from this IP' }
        : { ...base, type: 'limit_mu', description: 'Too many attempts from this IP address' };
      break;
    case 'password_leaked':
      facts = { ...base, type: 'pwd_leak', description: 'Login blocked: the password was found in a data breach' };
      break;
  }
  if (!facts) return;
  if (result.outcome !== 'ok') noteForLog(request, { outcomeLogged: true });
  services.tenantLogs.recordFor(request, facts);
}
