/**
 * `acr_values` (OIDC Core §3.1.2.1): the authentication context classes the application asks for, in order of
 * preference. The one this service acts on is the reference's multi-factor URI (step-up, mfa/policy.ts); others
 * are voluntary and the ID token's `acr` says which was met, so they are kept but not refused.
 */
import { InvalidRequest } from '../../../http/errors.js';
import type { AuthorizeCheck } from './context.js';

const MAX_VALUES = 10;

export const checkAcrValues: AuthorizeCheck = (context) => {
  const raw = (context.params.acr_values ?? '').trim();
  if (!raw) return;
  const values = [...new Set(raw.split(/\s+/))];
  if (values.length > MAX_VALUES) throw new InvalidRequest(`acr_values has more than ${MAX_VALUES} values`);
  context.request.acrValues = values;
};
