/**
 * The MFA API for grants without a browser (the reference's): a password grant that needs a second factor answers
 * `mfa_required` with an `mfa_token` (mfa-token.ts), and the client goes on here: list authenticators, associate
 * a first one, challenge one, then answer at /oauth/token with the mfa-otp, mfa-oob or mfa-recovery-code grant.
 */
import type { App, Services } from '../../services.js';
import { registerAssociate } from './associate.js';
import { registerListAuthenticators } from './authenticators.js';
import { registerChallenge } from './challenge.js';

export function registerMfaApi(app: App, services: Services): void {
  registerListAuthenticators(app, services);
  registerAssociate(app, services);
  registerChallenge(app, services);
}
