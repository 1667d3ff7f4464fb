/**
 * /api/v2/attack-protection/{brute-force-protection,breached-password-detection,suspicious-ip-throttling}
 * (reference C.10, the auth0@7 SDK's `attackProtection` types): each GET shows the tenant's settings (Auth0's
 * defaults until changed); each PATCH merges the fields sent (stages field by field) and returns the result.
 *
 * Where the reference is silent:
 *  - allowlists hold at most 100 IPv4/IPv6 addresses or CIDR ranges; anything else is a 400;
 *  - suspicious-IP `max_attempts` is 1 to 1,000,000 and `rate` 1 ms to one year;
 *  - raising the brute-force `max_attempts` lifts the tenant's brute-force blocks, as Auth0 documents.
 * The settings live in TenantSettings.attack_protection; a write drops this process's cached copies, other
 * nodes see it within 5 s.
 */
import { Type, type Static, type TSchema } from '@fastify/type-provider-typebox';
import { InvalidInput, NotFound } from '../http/errors.js';
import { isAllowlistEntry } from '../protection/ip-allowlist.js';
import {
  ADMIN_NOTIFICATION_FREQUENCIES,
  BREACHED_PASSWORD_METHODS,
  BREACHED_PASSWORD_SHIELDS,
  BREACHED_PASSWORD_STAGE_SHIELDS,
  BRUTE_FORCE_MODES,
  BRUTE_FORCE_SHIELDS,
  effectiveSettings,
  SUSPICIOUS_IP_SHIELDS,
  type EffectiveAttackProtection,
  type BreachedPasswordSettings,
  type BruteForceSettings,
  type SuspiciousIpSettings,
  type ThrottleStage,
} from '../protection/settings.js';
import type { App, Services } from '../services.js';
import { findTenantById, changeTenantSettings, type Tenant } from '../store/tenants.js';
import { operation } from './operation.js';

const MAX_ALLOWLIST = 100;
const YEAR_MS = 365 * 24 * 3600 * 1000;

const oneOf = <T extends readonly string[]>(values: T) => Type.Union(values.map((v) => Type.Literal(v)));
const listOf = <T extends TSchema>(item: T) => Type.Array(item, { uniqueItems: true, maxItems: 10 });
const Allowlist = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: MAX_ALLOWLIST });
const strict = { additionalProperties: false } as const;

const BruteForceView = Type.Object({
  enabled: Type.Boolean(),
  shields: Type.Array(oneOf(BRUTE_FORCE_SHIELDS)),
  allowlist: Type.Array(Type.String()),
  mode: oneOf(BRUTE_FORCE_MODES),
  max_attempts: Type.Integer(),
});
const BruteForcePatch = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    shields: Type.Optional(listOf(oneOf(BRUTE_FORCE_SHIELDS))),
    allowlist: Type.Optional(Allowlist),
    mode: Type.Optional(oneOf(BRUTE_FORCE_MODES)),
    max_attempts: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  },
  strict,
);

const StageShields = Type.Object({ shields: Type.Array(oneOf(BREACHED_PASSWORD_STAGE_SHIELDS)) });
const BreachedPasswordView = Type.Object({
  enabled: Type.Boolean(),
  shields: Type.Array(oneOf(BREACHED_PASSWORD_SHIELDS)),
  admin_notification_frequency: Type.Array(oneOf(ADMIN_NOTIFICATION_FREQUENCIES)),
  method: oneOf(BREACHED_PASSWORD_METHODS),
  stage: Type.Object({ 'pre-user-registration': StageShields, 'pre-change-password': StageShields }),
});
const StageShieldsPatch = Type.Object({ shields: Type.Optional(listOf(oneOf(BREACHED_PASSWORD_STAGE_SHIELDS))) }, strict);
const BreachedPasswordPatch = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    shields: Type.Optional(listOf(oneOf(BREACHED_PASSWORD_SHIELDS))),
    admin_notification_frequency: Type.Optional(listOf(oneOf(ADMIN_NOTIFICATION_FREQUENCIES))),
    method: Type.Optional(oneOf(BREACHED_PASSWORD_METHODS)),
    stage: Type.Optional(
      Type.Object({ 'pre-user-registration': Type.Optional(StageShieldsPatch), 'pre-change-password': Type.Optional(StageShieldsPatch) }, strict),
    ),
  },
  strict,
);

const Throttle = Type.Object({ max_attempts: Type.Integer(), rate: Type.Integer({ description: 'Milliseconds per attempt given back' }) });
const SuspiciousIpView = Type.Object({
  enabled: Type.Boolean(),
  shields: Type.Array(oneOf(SUSPICIOUS_IP_SHIELDS)),
  allowlist: Type.Array(Type.String()),
  stage: Type.Object({
    'pre-login': Throttle,
    'pre-user-registration': Throttle,
    'pre-custom-token-exchange': Type.Optional(Throttle),
  }),
});
const ThrottlePatch = Type.Object(
  {
    max_attempts: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    rate: Type.Optional(Type.Integer({ minimum: 1, maximum: YEAR_MS })),
  },
  strict,
);
const SuspiciousIpPatch = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    shields: Type.Optional(listOf(oneOf(SUSPICIOUS_IP_SHIELDS))),
    allowlist: Type.Optional(Allowlist),
    stage: Type.Optional(
      Type.Object(
        {
          'pre-login': Type.Optional(ThrottlePatch),
          'pre-user-registration': Type.Optional(ThrottlePatch),
          'pre-custom-token-exchange': Type.Optional(ThrottlePatch),
        },
        strict,
      ),
    ),
  },
  strict,
);

function assertAllowlist(allowlist: readonly string[] | undefined): void {
  const bad = allowlist?.find((entry) => !isAllowlistEntry(entry));
  if (bad !== undefined) throw new InvalidInput('body', `allowlist: ${JSON.stringify(bad)} is not an IP address or CIDR range`);
}

/** A stage's throttle with the fields sent laid over it; a stage never set before starts from what was sent. */
function mergeThrottle(current: ThrottleStage | undefined, patch: Static<typeof ThrottlePatch> | undefined, name: string): ThrottleStage | undefined {
  if (!patch) return current;
  const max = patch.max_attempts ?? current?.max_attempts;
  const rate = patch.rate ?? current?.rate;
  if (max === undefined || rate === undefined) throw new InvalidInput('body', `stage.${name}: both max_attempts and rate are required the first time`);
  return { max_attempts: max, rate };
}

export function registerAttackProtection(api: App, services: Services): void {
  const db = services.store.db;

  async function current(tenantId: string): Promise<Tenant> {
    const tenant = await findTenantById(db, tenantId);
    if (!tenant) throw new NotFound('The tenant does not exist.', 'inexistent_tenant');
    return tenant;
  }

  /**
   * Computes the section from the settings as they are under changeTenantSettings' lock and saves it: computed from
   * a read made before the lock, two PATCHes of different fields would each write back the other's old values.
   */
  async function change<K extends keyof EffectiveAttackProtection>(
    tenantId: string,
    section: K,
    merge: (before: EffectiveAttackProtection[K]) => EffectiveAttackProtection[K],
  ): Promise<{ before: EffectiveAttackProtection[K]; next: EffectiveAttackProtection[K] }> {
    let result: { before: EffectiveAttackProtection[K]; next: EffectiveAttackProtection[K] } | undefined;
    const written = await changeTenantSettings(db, tenantId, (settings) => {
      const before = effectiveSettings(settings.attack_protection)[section];
      result = { before, next: merge(before) };
      return { ...settings, attack_protection: { ...settings.attack_protection, [section]: result.next } };
    });
    if (!written || !result) throw new NotFound('The tenant does not exist.', 'inexistent_tenant');
    services.attackProtection.forget(tenantId);
    services.tenants.invalidate();
    return result;
  }

  const read = (summary: string, response: TSchema) => operation(['read:attack_protection'], { summary, response: { 200: response } });
  const update = <B extends TSchema>(summary: string, body: B, response: TSchema) =>
    operation(['update:attack_protection'], { summary, body, response: { 200: response } });

  api.get('/attack-protection/brute-force-protection', {
    ...read('Get the brute-force protection settings', BruteForceView),
    handler: async (request) => effectiveSettings((await current(request.tenant.id)).settings.attack_protection).brute_force_protection,
  });

  api.patch('/attack-protection/brute-force-protection', {
    ...update('Update the brute-force protection settings', BruteForcePatch, BruteForceView),
    handler: async (request) => {
      const patch = request.body;
      assertAllowlist(patch.allowlist);
      const tenantId = request.tenant.id;
      const { before, next } = await change(tenantId, 'brute_force_protection', (before): BruteForceSettings => ({
        enabled: patch.enabled ?? before.enabled,
        shields: patch.shields ?? before.shields,
        allowlist: patch.allowlist ?? before.allowlist,
        mode: patch.mode ?? before.mode,
        max_attempts: patch.max_attempts ?? before.max_attempts,
      }));
      // A raised threshold lifts the blocks the lower one caused (attack protection is the only writer of user_blocks).
      if (next.max_attempts > before.max_attempts) await services.attackProtection.liftBlocks(tenantId, { all: true });
      return next;
    },
  });

  api.get('/attack-protection/breached-password-detection', {
    ...read('Get the breached password detection settings', BreachedPasswordView),
    handler: async (request) => effectiveSettings((await current(request.tenant.id)).settings.attack_protection).breached_password_detection,
  });

  api.patch('/attack-protection/breached-password-detection', {
    ...update('Update the breached password detection settings', BreachedPasswordPatch, BreachedPasswordView),
    handler: async (request) => {
      const patch = request.body;
      const { next } = await change(request.tenant.id, 'breached_password_detection', (before): BreachedPasswordSettings => ({
        enabled: patch.enabled ?? before.enabled,
        shields: patch.shields ?? before.shields,
        admin_notification_frequency: patch.admin_notification_frequency ?? before.admin_notification_frequency,
        method: patch.method ?? before.method,
        stage: {
          'pre-user-registration': { shields: patch.stage?.['pre-user-registration']?.shields ?? before.stage['pre-user-registration'].shields },
          'pre-change-password': { shields: patch.stage?.['pre-change-password']?.shields ?? before.stage['pre-change-password'].shields },
        },
      }));
      return next;
    },
  });

  api.get('/attack-protection/suspicious-ip-throttling', {
    ...read('Get the suspicious IP throttling settings', SuspiciousIpView),
    handler: async (request) => effectiveSettings((await current(request.tenant.id)).settings.attack_protection).suspicious_ip_throttling,
  });

  api.patch('/attack-protection/suspicious-ip-throttling', {
    ...update('Update the suspicious IP throttling settings', SuspiciousIpPatch, SuspiciousIpView),
    handler: async (request) => {
      const patch = request.body;
      assertAllowlist(patch.allowlist);
      const { next } = await change(request.tenant.id, 'suspicious_ip_throttling', (before): SuspiciousIpSettings => {
        const exchange = mergeThrottle(before.stage['pre-custom-token-exchange'], patch.stage?.['pre-custom-token-exchange'], 'pre-custom-token-exchange');
        return {
          enabled: patch.enabled ?? before.enabled,
          shields: patch.shields ?? before.shields,
          allowlist: patch.allowlist ?? before.allowlist,
          stage: {
            'pre-login': mergeThrottle(before.stage['pre-login'], patch.stage?.['pre-login'], 'pre-login')!,
            'pre-user-registration': mergeThrottle(before.stage['pre-user-registration'], patch.stage?.['pre-user-registration'], 'pre-user-registration')!,
            ...(exchange && { 'pre-custom-token-exchange': exchange }),
          },
        };
      });
      return next;
    },
  });
}
