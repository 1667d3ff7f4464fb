/**
 * /api/v2/guardian (the reference's names): the tenant's MFA policy and which factors are enabled (mfa/policy.ts).
 *  - GET /guardian/factors lists every factor the reference knows, each with `enabled`; `otp`,
 *    `webauthn-roaming`, `webauthn-platform` and `recovery-code` exist here, so the others are always disabled.
 *  - PUT /guardian/factors/{name} switches one; enabling a factor this service does not offer answers 501
 *    (disabling it is true already, so it succeeds).
 *  - GET/PUT /guardian/policies: [] (never) or ["all-applications"]; the reference's `confidence-score`
 *    (adaptive MFA) answers 501.
 *  - GET/PUT /guardian/settings: remember this browser (mfa/remember-browser.ts): whether the MFA pages offer
 *    it, ticked or not, and how long a remembered browser is trusted (the reference's names, seconds, ranges).
 * Writes go into the tenant's settings document, as attack protection's do, and drop the cached tenant.
 */
import { Type } from '@fastify/type-provider-typebox';
import { InvalidInput, NotFound, NotOffered } from '../http/errors.js';
import { errorResponses } from '../http/responses.js';
import { GUARDIAN_FACTOR_NAMES, type GuardianFactorName } from '../mfa/factor.js';
import { factorEnabled, mfaPolicies, rememberBrowserSettings, SUPPORTED_FACTORS, type MfaSettings } from '../mfa/policy.js';
import type { App, Services } from '../services.js';
import { findTenantById, changeTenantSettings, type Tenant } from '../store/tenants.js';
import { operation } from './operation.js';

const FactorName = Type.String({ enum: [...GUARDIAN_FACTOR_NAMES], description: 'The factor' });
const FactorView = Type.Object({ name: FactorName, enabled: Type.Boolean(), trial_expired: Type.Boolean() });
const Enabled = Type.Object({ enabled: Type.Boolean() }, { additionalProperties: false });
const Policy = Type.Union([Type.Literal('all-applications'), Type.Literal('confidence-score')]);
const Policies = Type.Array(Policy, { maxItems: 1, description: '[] (never) or ["all-applications"] (every login)' });
const GuardianSettings = Type.Object({
  display_remember_me_checkbox: Type.Boolean({ description: 'Whether the MFA pages offer "Remember this browser" (default true)' }),
  remember_me_default_value: Type.Boolean({ description: 'Whether that checkbox starts ticked (default false)' }),
  mfa_session_inactivity_timeout: Type.Integer({ minimum: 3600, maximum: 2_592_000, description: 'Seconds without a login from a remembered browser after which it is asked again (default 604800, 7 days)' }),
  mfa_session_overall_timeout: Type.Integer({ minimum: 3600, maximum: 7_776_000, description: 'Seconds after which a remembered browser is asked again whatever its activity (default 2592000, 30 days)' }),
});
const GuardianSettingsUpdate = Type.Partial(GuardianSettings, { additionalProperties: false });

export function registerGuardian(api: App, services: Services): void {
  const db = services.store.db;

  async function current(tenantId: string): Promise<Tenant> {
    const tenant = await findTenantById(db, tenantId);
    if (!tenant) throw new NotFound('The tenant does not exist.', 'inexistent_tenant');
    return tenant;
  }

  /**
   * Lays `change(tenant as it is under changeTenantSettings' lock)` over the MFA settings: computed from a read
   * made before the lock, two PUTs (of two factors, say) would each write back the other's old value.
   */
  async function save(tenantId: string, change: (tenant: Tenant) => MfaSettings): Promise<void> {
    const written = await changeTenantSettings(db, tenantId, (settings, tenant) => ({ ...settings, mfa: { ...settings.mfa, ...change(tenant) } }));
    if (!written) throw new NotFound('The tenant does not exist.', 'inexistent_tenant');
    services.tenants.invalidate();
  }

  api.get('/guardian/factors', {
    ...operation(['read:guardian_factors'], { summary: 'List the MFA factors and whether each is enabled', response: { 200: Type.Array(FactorView) } }),
    handler: async (request) => {
      const tenant = await current(request.tenant.id);
      return GUARDIAN_FACTOR_NAMES.map((name) => ({ name, enabled: factorEnabled(tenant, name), trial_expired: false }));
    },
  });

  api.put('/guardian/factors/:name', {
    ...operation(['update:guardian_factors'], {
      summary: 'Enable or disable an MFA factor',
      params: Type.Object({ name: FactorName }),
      body: Enabled,
      response: { 200: Enabled, ...errorResponses('management', { 501: 'not_offered: a factor this server does not offer (only otp, webauthn-roaming, webauthn-platform and recovery-code)' }) },
    }),
    handler: async (request) => {
      const name = request.params.name as GuardianFactorName;
      const { enabled } = request.body;
      if (!SUPPORTED_FACTORS.includes(name)) {
        if (enabled) throw new NotOffered(`The ${name} factor`, 'is not offered by this server (otp, webauthn-roaming, webauthn-platform and recovery-code are).');
        return { enabled: false };
      }
      await save(request.tenant.id, (tenant) => ({ factors: { ...tenant.settings.mfa?.factors, [name]: enabled } }));
      return { enabled };
    },
  });

  api.get('/guardian/policies', {
    ...operation(['read:mfa_policies'], { summary: 'Get the MFA policy', response: { 200: Policies } }),
    handler: async (request) => mfaPolicies(await current(request.tenant.id)),
  });

  api.put('/guardian/policies', {
    ...operation(['update:mfa_policies'], {
      summary: 'Set the MFA policy',
      body: Policies,
      response: { 200: Policies, ...errorResponses('management', { 501: 'not_offered: confidence-score (adaptive MFA) is not offered' }) },
    }),
    handler: async (request) => {
      if (request.body.includes('confidence-score')) throw new NotOffered('The confidence-score policy (adaptive MFA)', 'is not offered by this server; use [] or ["all-applications"].');
      const policies = request.body.filter((p) => p === 'all-applications');
      await save(request.tenant.id, () => ({ policies }));
      return policies;
    },
  });

  api.get('/guardian/settings', {
    ...operation(['read:guardian_factors'], { summary: 'Get the Guardian settings (remember this browser)', response: { 200: GuardianSettings } }),
    handler: async (request) => rememberBrowserSettings(await current(request.tenant.id)),
  });

  api.put('/guardian/settings', {
    ...operation(['update:guardian_factors'], {
      summary: 'Set the Guardian settings (remember this browser)',
      body: GuardianSettingsUpdate,
      response: { 200: GuardianSettings, ...errorResponses('management', { 400: 'invalid_body: a value out of range or of the wrong type, or the inactivity timeout longer than the overall one' }) },
    }),
    handler: async (request) => {
      let next = rememberBrowserSettings(request.tenant);
      await save(request.tenant.id, (tenant) => {
        next = { ...rememberBrowserSettings(tenant), ...request.body };
        if (next.mfa_session_inactivity_timeout > next.mfa_session_overall_timeout) {
          throw new InvalidInput('body', 'mfa_session_inactivity_timeout cannot exceed mfa_session_overall_timeout.');
        }
        return { remember: next };
      });
      return next;
    },
  });
}
