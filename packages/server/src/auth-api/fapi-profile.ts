/**
 * The FAPI 2.0 Security Profile, per client (`compliance_level`): what each level changes beyond our defaults.
 * Our defaults already hold several of the profile's requirements for every client (PKCE S256 only, `iss` in
 * every authorization response, redirect_uri required, request_uri single use and ≤ 60 s, codes single use and
 * ≤ 60 s); the checks here are the ones only a FAPI 2.0 client gets:
 *
 *   level               client authentication                 sender constraint
 *   fapi2_sp_pkj_mtls   private_key_jwt                       mTLS (cnf.x5t#S256)
 *   fapi2_sp_mtls_mtls  tls_client_auth / self_signed_tls…    mTLS
 *   fapi2_sp_pkj_dpop   private_key_jwt                       DPoP (cnf.jkt)   (ours: FAPI 2.0 allows DPoP)
 *
 * and for all three: authorization requests through PAR only (§5.3.2.2-3), `response_type=code` only
 * (§5.3.2.2-1), PKCE required (§5.3.2.2-5), no resource owner password grant (§5.3.2.1-2), client assertions
 * whose `aud` is the issuer as a string (§5.3.2.1-8), and tokens only with the level's binding (§5.3.2.1-4).
 * Clause numbers are FAPI 2.0 Security Profile (final) list items, as the OpenID conformance suite cites them.
 */
import type { Client } from '../store/clients.js';
import type { ClientAuthMethod } from './client-auth/types.js';

export const FAPI2_LEVELS = ['fapi2_sp_pkj_mtls', 'fapi2_sp_mtls_mtls', 'fapi2_sp_pkj_dpop'] as const;
export type Fapi2Level = (typeof FAPI2_LEVELS)[number];

export interface Fapi2Profile {
  level: Fapi2Level;
  clientAuthentication: readonly ClientAuthMethod[];
  senderConstraint: 'mtls' | 'dpop';
}

const PROFILES: Record<Fapi2Level, Fapi2Profile> = {
  fapi2_sp_pkj_mtls: { level: 'fapi2_sp_pkj_mtls', clientAuthentication: ['private_key_jwt'], senderConstraint: 'mtls' },
  fapi2_sp_mtls_mtls: { level: 'fapi2_sp_mtls_mtls', clientAuthentication: ['tls_client_auth', 'self_signed_tls_client_auth'], senderConstraint: 'mtls' },
  fapi2_sp_pkj_dpop: { level: 'fapi2_sp_pkj_dpop', clientAuthentication: ['private_key_jwt'], senderConstraint: 'dpop' },
};

/** The client's FAPI 2.0 profile, or undefined for any other `compliance_level` (none, FAPI 1 levels). */
export function fapi2Profile(client: Client): Fapi2Profile | undefined {
  const level = client.compliance_level;
  return level && Object.hasOwn(PROFILES, level) ? PROFILES[level as Fapi2Level] : undefined;
}
