/** The federation strategies this server offers, by the connection `strategy` that selects them. */
import { appleStrategy } from './apple.js';
import { facebookStrategy } from './facebook.js';
import { githubStrategy } from './github.js';
import { googleStrategy } from './google-oauth2.js';
import { linkedinStrategy } from './linkedin.js';
import { oauth2Strategy } from './oauth2.js';
import { oidcStrategy } from './oidc.js';
import { samlpStrategy } from './samlp.js';
import type { FederationStrategy } from './strategy.js';
import { windowsliveStrategy } from './windowslive.js';

export const FEDERATION_STRATEGIES: Readonly<Record<string, FederationStrategy>> = {
  oidc: oidcStrategy,
  oauth2: oauth2Strategy,
  'google-oauth2': googleStrategy,
  github: githubStrategy,
  windowslive: windowsliveStrategy,
  facebook: facebookStrategy,
  linkedin: linkedinStrategy,
  apple: appleStrategy,
  samlp: samlpStrategy,
};

export function federationStrategy(strategy: string): FederationStrategy | undefined {
  return Object.hasOwn(FEDERATION_STRATEGIES, strategy) ? FEDERATION_STRATEGIES[strategy] : undefined;
}
