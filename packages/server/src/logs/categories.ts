/**
 * Log stream filters: the reference's category groups ("Log stream filters"), each naming the event type codes
 * of logs/catalogue.ts that fall in it. A stream with no filters receives every log; a code in no group is
 * `other` (the Guardian `gd_*` events among them). `actions` and `scim.event` are accepted and match nothing: this server writes none of their events.
 */
import type { LogEventType } from './catalogue.js';

export const LOG_CATEGORIES = {
  'auth.login.fail': ['f', 'fp', 'fu', 'fcoa'],
  'auth.login.notification': ['pwd_leak'],
  'auth.login.success': ['s', 'scoa'],
  'auth.logout.fail': ['flo'],
  'auth.logout.success': ['slo'],
  'auth.signup.fail': ['fs', 'signup_pwd_leak'],
  'auth.signup.success': ['ss'],
  'auth.silent_auth.fail': [],
  'auth.silent_auth.success': [],
  'auth.token_exchange.fail': ['feacft', 'fepft', 'feccft', 'fertft', 'feotpft', 'feoobft', 'fercft', 'fd'],
  'auth.token_exchange.success': ['seacft', 'sepft', 'seccft', 'sertft', 'srrt', 'seotpft', 'seoobft', 'sercft', 'sd'],
  'management.fail': ['fapi'],
  'management.success': ['sapi'],
  'scim.event': [],
  'system.notification': ['limit_wc', 'limit_mu', 'api_limit'],
  'user.fail': ['fcp', 'fcpr', 'fv'],
  'user.notification': ['cls', 'cs'],
  'user.success': ['scp', 'scpr', 'sv', 'du'],
  actions: [],
  other: [],
} as const satisfies Record<string, readonly LogEventType[]>;

export type LogCategory = keyof typeof LOG_CATEGORIES;
export const LOG_CATEGORY_NAMES = Object.keys(LOG_CATEGORIES) as LogCategory[];

const CATEGORISED = new Set<string>(Object.values(LOG_CATEGORIES).flat());

/** Whether a log of `type` passes a stream's filters (none: every log). */
export function matchesCategories(type: string, categories: readonly LogCategory[]): boolean {
  if (categories.length === 0) return true;
  return categories.some((category) =>
    category === 'other' ? !CATEGORISED.has(type) : (LOG_CATEGORIES[category] as readonly string[]).includes(type),
  );
}
