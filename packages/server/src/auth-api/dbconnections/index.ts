/** The /dbconnections endpoints of database connections (reference C.6). */
import type { App, Services } from '../../services.js';
import { registerChangePassword } from './change-password.js';
import { registerSignup } from './signup.js';

export function registerDbConnections(app: App, services: Services): void {
  registerSignup(app, services);
  registerChangePassword(app, services);
}
