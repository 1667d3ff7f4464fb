/** Reading token-request parameters that the shared schema declares optional but a grant requires. */
import { InvalidRequest } from '../../http/errors.js';

export function optionalString(params: Record<string, unknown>, name: string): string | undefined {
  const value = params[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new InvalidRequest(`${name} must be a string`);
  return value;
}

export function requiredString(params: Record<string, unknown>, name: string): string {
  const value = optionalString(params, name);
  if (value === undefined || value === '') throw new InvalidRequest(`Missing required parameter: ${name}`);
  return value;
}
