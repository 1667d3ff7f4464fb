/**
 * The Management API scope catalogue, as data: exactly the scopes of the contract's table
 * (scopes.json is a copy of shared/spec/management-scopes.json; a test keeps them equal).
 * Each route declares the scopes that allow it; any one of them suffices.
 */
import catalogue from './scopes.json' with { type: 'json' };

export const MANAGEMENT_SCOPES: readonly string[] = Object.freeze([...catalogue.scopes]);

const SCOPE_SET = new Set(MANAGEMENT_SCOPES);

export function isManagementScope(scope: string): boolean {
  return SCOPE_SET.has(scope);
}

const ACTION_TEXT: Record<string, string> = { create: 'Create', read: 'Read', update: 'Update', delete: 'Delete' };

/** `read:event_streams` → `Read event streams`. */
export function describeScope(scope: string): string {
  const [action = '', resource = ''] = scope.split(':');
  return `${ACTION_TEXT[action] ?? action} ${resource.replace(/_/g, ' ')}`;
}
