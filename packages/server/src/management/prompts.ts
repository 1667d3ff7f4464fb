/**
 * /api/v2/prompts: the hosted pages' settings and texts.
 *  - GET/PATCH /prompts: how the pages behave. This server has one experience (its own pages: the reference's
 *    `universal_login_experience: "new"`), asks for identifier and password on one page (`identifier_first:
 *    false`) and has no passkeys; a PATCH that states exactly that is answered as done, any other value is a 501
 *    naming what is not offered.
 *  - GET/PUT /prompts/{prompt}/custom-text/{language}: a tenant's own texts over the shipped ones (English and
 *    French, login/texts.ts), shown by the pages in the language chosen from the browser's Accept-Language among
 *    the tenant's `enabled_locales`. Only the prompts, screens and keys the pages show are accepted; a prompt the
 *    pages do not have reads as `{}` (no texts) and refuses texts with a 501. A PUT replaces that prompt's
 *    texts in that language; `{}` removes them.
 * Partials and per-screen rendering settings are not offered (management/not-offered.ts).
 */
import { Type } from '@fastify/type-provider-typebox';
import { signalTenantChanged } from '../events/outbox.js';
import { InvalidInput, NotFound, NotOffered } from '../http/errors.js';
import { asSent, errorResponses } from '../http/responses.js';
import { isShippedLanguage, promptScreens, SHIPPED_LANGUAGES } from '../login/texts.js';
import type { App, Services } from '../services.js';
import { findTenantById, changeTenantSettings, type Tenant, type TenantSettings } from '../store/tenants.js';
import { operation } from './operation.js';

const SETTINGS = { universal_login_experience: 'new', identifier_first: false, webauthn_platform_first_factor: false } as const;

const SettingsView = Type.Object({
  universal_login_experience: Type.Literal('new'),
  identifier_first: Type.Literal(false),
  webauthn_platform_first_factor: Type.Literal(false),
});
const SettingsPatch = Type.Object(
  {
    universal_login_experience: Type.Optional(Type.Union([Type.Literal('new'), Type.Literal('classic')])),
    identifier_first: Type.Optional(Type.Boolean()),
    webauthn_platform_first_factor: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const PromptParams = Type.Object({
  prompt: Type.String({ pattern: '^[a-z0-9-]{1,50}$' }),
  language: Type.String({ pattern: '^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{2,8})*$', maxLength: 35 }),
});
const Text = Type.String({ maxLength: 2000, pattern: '^[^\\u0000]*$' });
const CustomText = Type.Record(Type.String({ maxLength: 100 }), Type.Record(Type.String({ maxLength: 100 }), Text));
const CustomTextView = Type.Unsafe<Record<string, Record<string, string>>>(
  asSent(Type.Record(Type.String(), Type.Record(Type.String(), Type.String()), { description: 'Screen → key → text; `{}` when the tenant has none' })),
);

export function registerPrompts(api: App, services: Services): void {
  const db = services.store.db;
  async function current(id: string): Promise<Tenant> {
    const tenant = await findTenantById(db, id);
    if (!tenant) throw new NotFound('The tenant does not exist.', 'inexistent_tenant');
    return tenant;
  }

  api.get('/prompts', {
    ...operation(['read:prompts'], { summary: 'Get the hosted pages’ settings', response: { 200: SettingsView } }),
    handler: async () => SETTINGS,
  });

  api.patch('/prompts', {
    ...operation(['update:prompts'], {
      summary: 'Update the hosted pages’ settings (only to what they do)',
      body: SettingsPatch,
      response: { 200: SettingsView, ...errorResponses('management', { 501: 'not_offered: the classic experience, identifier-first login, or passkeys' }) },
    }),
    handler: async (request) => {
      const patch = request.body;
      if (patch.universal_login_experience === 'classic') throw new NotOffered('The classic login experience', 'is not offered: the hosted pages are this server’s own.');
      if (patch.identifier_first === true) throw new NotOffered('Identifier-first login', 'is not offered: the log-in page asks for identifier and password together.');
      if (patch.webauthn_platform_first_factor === true) throw new NotOffered('Passkeys', 'are not offered yet.');
      return SETTINGS;
    },
  });

  api.get('/prompts/:prompt/custom-text/:language', {
    ...operation(['read:prompts'], { summary: 'Get a prompt’s custom texts in a language', params: PromptParams, response: { 200: CustomTextView } }),
    handler: async (request, reply) => {
      const { prompt, language } = request.params;
      const tenant = await current(request.tenant.id);
      return reply.send(tenant.settings.prompts?.custom_text?.[prompt]?.[language.toLowerCase()] ?? {});
    },
  });

  api.put('/prompts/:prompt/custom-text/:language', {
    ...operation(['update:prompts'], {
      summary: 'Set a prompt’s custom texts in a language',
      params: PromptParams,
      body: CustomText,
      response: {
        200: CustomTextView,
        ...errorResponses('management', {
          400: 'invalid_body: a screen or key the prompt’s page does not show; invalid_uri: a language without shipped texts',
          501: 'not_offered: a prompt whose page this server does not have',
        }),
      },
    }),
    handler: async (request, reply) => {
      const { prompt } = request.params;
      const language = request.params.language.toLowerCase();
      const screens = promptScreens(prompt);
      if (!screens) throw new NotOffered(`The ${prompt} prompt`, `is not offered: custom texts are for the pages this server has (${['login', 'signup'].join(', ')}).`);
      if (!isShippedLanguage(language)) {
        throw new InvalidInput('params', `language: ${language} has no shipped texts; the hosted pages speak ${SHIPPED_LANGUAGES.join(', ')}`);
      }
      for (const [screen, texts] of Object.entries(request.body)) {
        const keys = screens[screen];
        if (!keys) throw new InvalidInput('body', `${screen}: the ${prompt} prompt has the screens ${Object.keys(screens).join(', ')}`);
        const unknown = Object.keys(texts).find((key) => !keys.includes(key));
        if (unknown) throw new InvalidInput('body', `${screen}.${unknown}: the ${screen} screen shows ${keys.join(', ')}`);
      }
      const texts = Object.fromEntries(Object.entries(request.body).filter(([, t]) => Object.keys(t).length > 0));
      const tenant = await changeTenantSettings(db, request.tenant.id, (settings): TenantSettings => {
        const customText = structuredClone(settings.prompts?.custom_text ?? {});
        const byLanguage = (customText[prompt] ??= {});
        if (Object.keys(texts).length > 0) byLanguage[language] = texts;
        else delete byLanguage[language];
        if (Object.keys(byLanguage).length === 0) delete customText[prompt];
        return { ...settings, prompts: { ...settings.prompts, custom_text: customText } };
      });
      if (!tenant) throw new NotFound('The tenant does not exist.', 'inexistent_tenant');
      services.tenants.invalidate();
      signalTenantChanged(tenant.id);
      return reply.send(texts);
    },
  });
}
