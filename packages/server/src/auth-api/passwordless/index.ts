/** The passwordless endpoints (reference C.7): start, verify, and verify_redirect (also the magic link's target). */
import type { App, Services } from '../../services.js';
import { registerPasswordlessStart } from './start.js';
import { registerPasswordlessVerifyRedirect } from './verify-redirect.js';
import { registerPasswordlessVerify } from './verify.js';

export function registerPasswordless(app: App, services: Services): void {
  registerPasswordlessStart(app, services);
  registerPasswordlessVerify(app, services);
  registerPasswordlessVerifyRedirect(app, services);
}
