/**
 * /api/v2/tenants/settings: the tenant's own settings under Auth0's names, mapped onto the tenant row
 * (`friendly_name`) and its TenantSettings document.
 *
 * Where the reference is silent:
 *  - `session_lifetime` and `idle_session_lifetime` are hours (1 to 8760), shown with the defaults the login
 *    session uses (168 and 72) when never set;
 *  - an empty string clears `picture_url`, `default_audience` and `default_directory`;
 *  - `default_directory` must name an existing database (`auth0`) connection;
 *  - `allow_insecure_webhooks` lets event streams use http and loopback or private addresses (development);
 *  - `session_lifetime_in_minutes` and `idle_session_lifetime_in_minutes` (what auth0-deploy-cli sends) set the
 *    same lifetimes in minutes (60 to 525600), stored as hours; they cannot be combined with the hour fields;
 *  - `enabled_locales` may name only languages the hosted pages ship texts for (login/texts.ts), the first being
 *    the default; `support_email` and `support_url` are kept for people to contact (an empty string clears);
 *  - no `flags` are offered: a tenant flag would be a behaviour switch this server does not have.
 *  - `log_retention_days` (1 to 3650, default 30) is how long tenant logs are kept (logs/writer.ts prunes).
 * A write drops this process's cached tenant, so the next request sees it; other nodes within 5 s.
 */
import { Type, type Static } from '@fastify/type-provider-typebox';
import { signalTenantChanged } from '../events/outbox.js';
import { InvalidInput, NotFound } from '../http/errors.js';
import type { App, Services } from '../services.js';
import { findConnectionByName } from '../store/connections.js';
import { findTenantById, changeTenantSettings, type Tenant, type TenantSettings } from '../store/tenants.js';
import { logRetentionDays } from '../logs/writer.js';
import { operation } from './operation.js';
import { enabledLanguages, SHIPPED_LANGUAGES } from '../login/texts.js';

/** What login/session.ts uses when a lifetime was never set. */
const DEFAULT_SESSION_LIFETIME_HOURS = 168;
const DEFAULT_IDLE_SESSION_LIFETIME_HOURS = 72;

const NO_NUL = '^[^\\u0000]*$';
const Url = Type.String({ maxLength: 2000, pattern: '^(https?://[^\\u0000\\s]+)?$' });
const Hours = Type.Number({ minimum: 1, maximum: 8760 });
const Minutes = Type.Number({ minimum: 60, maximum: 525600 });
const Color = Type.String({ pattern: '^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$' });

/** The reference's `mtls`: with a trusted edge (custom domain API key), advertise mtls.<host> aliases (RFC 8705 §5). */
const MtlsSettings = Type.Object(
  { enable_endpoint_aliases: Type.Optional(Type.Boolean({ description: 'Advertise mtls_endpoint_aliases on mtls.<host> in discovery (RFC 8705 §5)' })) },
  { additionalProperties: false },
);

const SettingsView = Type.Object({
  friendly_name: Type.String(),
  picture_url: Type.Optional(Type.String()),
  allowed_logout_urls: Type.Array(Type.String()),
  session_lifetime: Type.Number({ description: 'Hours' }),
  idle_session_lifetime: Type.Number({ description: 'Hours' }),
  default_audience: Type.Optional(Type.String()),
  default_directory: Type.Optional(Type.String()),
  universal_login: Type.Optional(Type.Object({ colors: Type.Object({ primary: Type.Optional(Type.String()) }) })),
  allow_insecure_webhooks: Type.Boolean(),
  support_email: Type.Optional(Type.String()),
  support_url: Type.Optional(Type.String()),
  enabled_locales: Type.Array(Type.String()),
  log_retention_days: Type.Integer({ description: 'Days tenant logs are kept' }),
  require_pushed_authorization_requests: Type.Boolean({ description: 'Every application must send its authorization requests through /oauth/par (RFC 9126)' }),
  mtls: Type.Optional(MtlsSettings),
});
type SettingsView = Static<typeof SettingsView>;

const SettingsPatch = Type.Object(
  {
    friendly_name: Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: NO_NUL })),
    picture_url: Type.Optional(Url),
    allowed_logout_urls: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 2000, pattern: NO_NUL }), { maxItems: 100 })),
    session_lifetime: Type.Optional(Hours),
    idle_session_lifetime: Type.Optional(Hours),
    default_audience: Type.Optional(Type.String({ maxLength: 600, pattern: NO_NUL })),
    default_directory: Type.Optional(Type.String({ maxLength: 128, pattern: NO_NUL })),
    universal_login: Type.Optional(
      Type.Object(
        { colors: Type.Optional(Type.Object({ primary: Type.Optional(Color) }, { additionalProperties: false })) },
        { additionalProperties: false },
      ),
    ),
    allow_insecure_webhooks: Type.Optional(Type.Boolean()),
    session_lifetime_in_minutes: Type.Optional(Minutes),
    idle_session_lifetime_in_minutes: Type.Optional(Minutes),
    support_email: Type.Optional(Type.String({ maxLength: 320, pattern: '^([^\\s@\\u0000]+@[^\\s@\\u0000]+)?$' })),
    support_url: Type.Optional(Url),
    enabled_locales: Type.Optional(
      Type.Array(Type.Union(SHIPPED_LANGUAGES.map((l) => Type.Literal(l))), { minItems: 1, uniqueItems: true, description: `Languages with shipped texts: ${SHIPPED_LANGUAGES.join(', ')}` }),
    ),
    log_retention_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650 })),
    require_pushed_authorization_requests: Type.Optional(Type.Boolean()),
    mtls: Type.Optional(MtlsSettings),
  },
  { additionalProperties: false },
);
type SettingsPatch = Static<typeof SettingsPatch>;

function present(tenant: Tenant): SettingsView {
  const s = tenant.settings;
  return {
    friendly_name: tenant.friendlyName,
    ...(s.branding?.logo_url && { picture_url: s.branding.logo_url }),
    allowed_logout_urls: s.allowed_logout_urls ?? [],
    session_lifetime: s.session_lifetime ?? DEFAULT_SESSION_LIFETIME_HOURS,
    idle_session_lifetime: s.idle_session_lifetime ?? DEFAULT_IDLE_SESSION_LIFETIME_HOURS,
    ...(s.default_audience && { default_audience: s.default_audience }),
    ...(s.default_directory && { default_directory: s.default_directory }),
    ...(s.branding?.primary_color && { universal_login: { colors: { primary: s.branding.primary_color } } }),
    allow_insecure_webhooks: s.allow_insecure_webhooks === true,
    ...(s.support_email && { support_email: s.support_email }),
    ...(s.support_url && { support_url: s.support_url }),
    enabled_locales: enabledLanguages(tenant),
    log_retention_days: logRetentionDays(s),
    require_pushed_authorization_requests: s.require_pushed_authorization_requests === true,
    ...(s.mtls && { mtls: s.mtls }),
  };
}

/** `value` for a string setting, where "" means "not set". */
function orUnset(value: string | undefined, current: string | undefined): string | undefined {
  if (value === undefined) return current;
  return value === '' ? undefined : value;
}

function applyPatch(settings: TenantSettings, patch: SettingsPatch): TenantSettings {
  const branding = {
    ...settings.branding,
    logo_url: orUnset(patch.picture_url, settings.branding?.logo_url),
    primary_color: patch.universal_login?.colors?.primary ?? settings.branding?.primary_color,
  };
  const next: TenantSettings = {
    ...settings,
    branding,
    ...(patch.allowed_logout_urls !== undefined && { allowed_logout_urls: patch.allowed_logout_urls }),
    ...(patch.session_lifetime !== undefined && { session_lifetime: patch.session_lifetime }),
    ...(patch.idle_session_lifetime !== undefined && { idle_session_lifetime: patch.idle_session_lifetime }),
    ...(patch.session_lifetime_in_minutes !== undefined && { session_lifetime: patch.session_lifetime_in_minutes / 60 }),
    ...(patch.idle_session_lifetime_in_minutes !== undefined && { idle_session_lifetime: patch.idle_session_lifetime_in_minutes / 60 }),
    support_email: orUnset(patch.support_email, settings.support_email),
    support_url: orUnset(patch.support_url, settings.support_url),
    ...(patch.enabled_locales !== undefined && { enabled_locales: patch.enabled_locales }),
    default_audience: orUnset(patch.default_audience, settings.default_audience),
    default_directory: orUnset(patch.default_directory, settings.default_directory),
    ...(patch.allow_insecure_webhooks !== undefined && { allow_insecure_webhooks: patch.allow_insecure_webhooks }),
    ...(patch.log_retention_days !== undefined && { log_retention_days: patch.log_retention_days }),
    ...(patch.require_pushed_authorization_requests !== undefined && { require_pushed_authorization_requests: patch.require_pushed_authorization_requests }),
    ...(patch.mtls !== undefined && { mtls: { ...settings.mtls, ...patch.mtls } }),
  };
  // Unset values are dropped rather than stored as undefined/null.
  return JSON.parse(JSON.stringify(next)) as TenantSettings;
}

export function registerTenantSettings(api: App, services: Services): void {
  const db = services.store.db;

  /** Fresh from the database: request.tenant may be a few seconds old. */
  async function current(id: string): Promise<Tenant> {
    const tenant = await findTenantById(db, id);
    if (!tenant) throw new NotFound('The tenant does not exist.', 'inexistent_tenant');
    return tenant;
  }

  api.get('/tenants/settings', {
    ...operation(['read:tenant_settings'], { summary: 'Get the tenant settings', response: { 200: SettingsView } }),
    handler: async (request) => present(await current(request.tenant.id)),
  });

  api.patch('/tenants/settings', {
    ...operation(['update:tenant_settings'], { summary: 'Update the tenant settings', body: SettingsPatch, response: { 200: SettingsView } }),
    handler: async (request) => {
      const tenant = await current(request.tenant.id);
      const patch = request.body;
      if (patch.session_lifetime !== undefined && patch.session_lifetime_in_minutes !== undefined) {
        throw new InvalidInput('body', 'session_lifetime and session_lifetime_in_minutes set the same lifetime: send one');
      }
      if (patch.idle_session_lifetime !== undefined && patch.idle_session_lifetime_in_minutes !== undefined) {
        throw new InvalidInput('body', 'idle_session_lifetime and idle_session_lifetime_in_minutes set the same lifetime: send one');
      }
      if (patch.default_directory) {
        const connection = await findConnectionByName(db, tenant.id, patch.default_directory);
        if (!connection || connection.strategy !== 'auth0') {
          throw new InvalidInput('body', `default_directory: no database connection named ${JSON.stringify(patch.default_directory)}`);
        }
      }
      const changed = await changeTenantSettings(db, tenant.id, (settings) => applyPatch(settings, patch), {
        ...(patch.friendly_name !== undefined && { friendlyName: patch.friendly_name }),
      });
      if (!changed) throw new NotFound('The tenant does not exist.', 'inexistent_tenant');
      services.tenants.invalidate();
      signalTenantChanged(tenant.id);
      return present(changed);
    },
  });
}
