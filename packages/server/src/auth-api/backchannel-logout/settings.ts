/**
 * A client's back-channel logout settings, in the reference's shape (`oidc_logout`):
 *   { backchannel_logout_urls: [url], backchannel_logout_initiators: { mode: 'custom' | 'all', selected_initiators } }
 * One URL, as the reference allows. Without initiators, RP- and IdP-initiated logouts notify the client (the
 * reference's default); `mode: 'all'` takes every way a session ends.
 */
import type { Client } from '../../store/clients.js';

/**
 * The reference's initiator names (the Management API's enum). We raise `rp-logout` (/v2/logout, /oidc/logout, a
 * SAML LogoutRequest), `password-changed`, `account-deactivated` and `account-deleted`. `idp-logout` is accepted
 * because the reference requires it beside `rp-logout` in a custom selection; it would be an upstream identity
 * provider ending the session, which no connection here reports, so it never fires. The rest are refused when
 * selected (NOT_RAISED): accepting them would promise logout tokens nothing sends.
 */
export const LOGOUT_INITIATORS = [
  'rp-logout',
  'idp-logout',
  'password-changed',
  'account-deactivated',
  'account-deleted',
  'session-expired',
  'session-revoked',
  'email-identifier-changed',
  'mfa-phone-unenrolled',
] as const;
export type LogoutInitiator = (typeof LOGOUT_INITIATORS)[number];

/** Selectable in the reference, never raised here; refused with 400 (management/clients.ts) and why. */
export const NOT_RAISED: Partial<Record<LogoutInitiator, string>> = {
  'session-expired': 'sessions that expire are removed when next seen or swept, not announced',
  'session-revoked': 'there is no session revocation route here',
  'email-identifier-changed': 'an email change does not end sessions here',
  'mfa-phone-unenrolled': 'there is no phone factor here',
};

const DEFAULT_INITIATORS: readonly LogoutInitiator[] = ['rp-logout', 'idp-logout'];

export interface BackchannelLogoutSettings {
  url: string;
  initiators: 'all' | readonly string[];
}

/** The client's settings, or undefined when it has no back-channel logout URL. Stored values are read defensively. */
export function backchannelLogoutSettings(client: Client): BackchannelLogoutSettings | undefined {
  const raw = client.oidc_logout as { backchannel_logout_urls?: unknown; backchannel_logout_initiators?: unknown } | undefined;
  if (!raw || typeof raw !== 'object') return undefined;
  const urls = Array.isArray(raw.backchannel_logout_urls) ? raw.backchannel_logout_urls.filter((u): u is string => typeof u === 'string' && u !== '') : [];
  const url = urls[0];
  if (!url) return undefined;
  const initiators = raw.backchannel_logout_initiators as { mode?: unknown; selected_initiators?: unknown } | undefined;
  if (initiators?.mode === 'all') return { url, initiators: 'all' };
  if (initiators?.mode === 'custom' && Array.isArray(initiators.selected_initiators)) {
    return { url, initiators: initiators.selected_initiators.filter((i): i is string => typeof i === 'string') };
  }
  return { url, initiators: DEFAULT_INITIATORS };
}

export function notifiesOn(settings: BackchannelLogoutSettings, initiator: LogoutInitiator): boolean {
  return settings.initiators === 'all' || settings.initiators.includes(initiator);
}
