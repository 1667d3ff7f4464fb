/**
 * /api/v2/branding: the hosted pages' look, as the reference names it: `logo_url`, `colors.primary`,
 * `colors.page_background`, `favicon_url` and `font.url`, each applied by login/pages/chrome.ts (the font is
 * loaded under a CSP `font-src` of its origin). The logo and primary colour are the same settings
 * /tenants/settings shows as `picture_url` and `universal_login.colors.primary`.
 *
 * Where the reference is silent or offers more: colours are `#rgb`/`#rrggbb` only (no gradient objects), URLs are
 * https only (what the pages' CSP lets a browser load), and `null` clears a setting. Universal Login page
 * templates and themes are not offered (management/not-offered.ts).
 */
import { Type, type Static } from '@fastify/type-provider-typebox';
import { signalTenantChanged } from '../events/outbox.js';
import { NotFound } from '../http/errors.js';
import type { App, Services } from '../services.js';
import { findTenantById, changeTenantSettings, type Tenant, type TenantSettings } from '../store/tenants.js';
import { operation } from './operation.js';

const HttpsUrl = Type.String({ maxLength: 2000, pattern: '^https://[^\\u0000\\s]+$' });
const Color = Type.String({ pattern: '^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$' });
const orNull = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

const BrandingView = Type.Object({
  colors: Type.Optional(Type.Object({ primary: Type.Optional(Type.String()), page_background: Type.Optional(Type.String()) })),
  logo_url: Type.Optional(Type.String()),
  favicon_url: Type.Optional(Type.String()),
  font: Type.Optional(Type.Object({ url: Type.String() })),
});
type BrandingView = Static<typeof BrandingView>;

const BrandingPatch = Type.Object(
  {
    colors: Type.Optional(
      Type.Union([
        Type.Object({ primary: Type.Optional(orNull(Color)), page_background: Type.Optional(orNull(Color)) }, { additionalProperties: false }),
        Type.Null(),
      ]),
    ),
    logo_url: Type.Optional(orNull(HttpsUrl)),
    favicon_url: Type.Optional(orNull(HttpsUrl)),
    font: Type.Optional(Type.Union([Type.Object({ url: orNull(HttpsUrl) }, { additionalProperties: false }), Type.Null()])),
  },
  { additionalProperties: false },
);
type BrandingPatch = Static<typeof BrandingPatch>;

type Stored = NonNullable<TenantSettings['branding']>;

export function presentBranding(branding: Stored | undefined): BrandingView {
  const b = branding ?? {};
  const colors = { ...(b.primary_color && { primary: b.primary_color }), ...(b.page_background && { page_background: b.page_background }) };
  return {
    ...(Object.keys(colors).length > 0 && { colors }),
    ...(b.logo_url && { logo_url: b.logo_url }),
    ...(b.favicon_url && { favicon_url: b.favicon_url }),
    ...(b.font_url && { font: { url: b.font_url } }),
  };
}

/** A field of the patch: absent keeps, null clears, a value sets. */
function merged(value: string | null | undefined, current: string | undefined): string | undefined {
  if (value === undefined) return current;
  return value ?? undefined;
}

function applyPatch(current: Stored | undefined, patch: BrandingPatch): Stored {
  const b = current ?? {};
  const colors = patch.colors;
  const next: Stored = {
    ...b,
    primary_color: colors === null ? undefined : merged(colors?.primary, b.primary_color),
    page_background: colors === null ? undefined : merged(colors?.page_background, b.page_background),
    logo_url: merged(patch.logo_url, b.logo_url),
    favicon_url: merged(patch.favicon_url, b.favicon_url),
    font_url: patch.font === null ? undefined : merged(patch.font?.url, b.font_url),
  };
  return JSON.parse(JSON.stringify(next)) as Stored;
}

export function registerBranding(api: App, services: Services): void {
  const db = services.store.db;
  async function current(id: string): Promise<Tenant> {
    const tenant = await findTenantById(db, id);
    if (!tenant) throw new NotFound('The tenant does not exist.', 'inexistent_tenant');
    return tenant;
  }

  api.get('/branding', {
    ...operation(['read:branding'], { summary: 'Get the branding of the hosted pages', response: { 200: BrandingView } }),
    handler: async (request) => presentBranding((await current(request.tenant.id)).settings.branding),
  });

  api.patch('/branding', {
    ...operation(['update:branding'], { summary: 'Update the branding of the hosted pages', body: BrandingPatch, response: { 200: BrandingView } }),
    handler: async (request) => {
      const tenant = await changeTenantSettings(db, request.tenant.id, (settings): TenantSettings => ({ ...settings, branding: applyPatch(settings.branding, request.body) }));
      if (!tenant) throw new NotFound('The tenant does not exist.', 'inexistent_tenant');
      services.tenants.invalidate();
      signalTenantChanged(tenant.id);
      return presentBranding(tenant.settings.branding);
    },
  });
}
