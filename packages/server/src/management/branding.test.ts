/**
 * /api/v2/branding and /api/v2/prompts over real HTTP, and their effect on the hosted log-in and sign-up pages:
 * colours, logo, favicon and font in the page (the font allowed by the page's CSP), the tenant's languages and
 * its own texts (English and French shipped), nulls clearing, and what is refused (texts for keys a page does
 * not show, languages without texts, behaviours not offered). Runs on SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseLanguage } from '../login/texts.js';
import type { Tenant } from '../store/tenants.js';
import { managementCaller } from '../test-support/management-api.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { postgresAvailable } from '../test-support/services.js';
import { createApp, TestBrowser, type TestApp } from '../test-support/sign-in.js';

const dialects = ['sqlite', ...((await postgresAvailable()) ? (['postgres'] as const) : [])] as const;

describe.each(dialects)('branding and prompts (%s)', (dialect) => {
  let server: TestServer;
  let app: TestApp;

  const call = managementCaller(() => server);

  /** The hosted page a fresh authorization request shows, with its CSP. */
  async function hostedPage(screenHint?: 'signup'): Promise<{ html: string; csp: string }> {
    const browser = new TestBrowser();
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: app.client_id,
      redirect_uri: 'https://app.example/callback',
      scope: 'openid',
      state: 's',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      ...(screenHint && { screen_hint: screenHint }),
    });
    const page = await browser.follow(server.url, await browser.get(`${server.url}/authorize?${query}`));
    if (page instanceof URL) throw new Error(`left for ${page.href}`);
    expect(page.status).toBe(200);
    return { html: await page.text(), csp: page.headers.get('content-security-policy') ?? '' };
  }

  beforeAll(async () => {
    server = await startTestServer({ dialect });
    app = await createApp(server, { name: 'Northwind Shop' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('branding: stored, shown by the pages, cleared with null', async () => {
    expect(await call('GET', '/branding')).toEqual({ status: 200, body: {} });
    const branding = {
      colors: { primary: '#0f766e', page_background: '#fafaf0' },
      logo_url: 'https://cdn.example.com/logo.png',
      favicon_url: 'https://cdn.example.com/favicon.png',
      font: { url: 'https://fonts.example.com/brand.woff2' },
    };
    expect(await call('PATCH', '/branding', branding)).toEqual({ status: 200, body: branding });
    expect((await call('GET', '/branding')).body).toEqual(branding);
    // The same logo and colour as /tenants/settings names them.
    expect((await call('GET', '/tenants/settings')).body).toMatchObject({ picture_url: branding.logo_url, universal_login: { colors: { primary: '#0f766e' } } });

    const { html, csp } = await hostedPage();
    expect(html).toContain('--brand:#0f766e');
    expect(html).toContain('body{background:#fafaf0}');
    expect(html).toContain('<link rel="icon" href="https://cdn.example.com/favicon.png">');
    expect(html).toContain('src="https://cdn.example.com/logo.png"');
    expect(html).toContain('@font-face{font-family:"Brand";src:url("https://fonts.example.com/brand.woff2")}');
    expect(csp).toContain('font-src https://fonts.example.com');

    expect((await call('PATCH', '/branding', { colors: { page_background: null }, font: null, favicon_url: null })).body).toEqual({
      colors: { primary: '#0f766e' },
      logo_url: branding.logo_url,
    });
    const after = await hostedPage();
    expect(after.html).not.toContain('@font-face');
    expect(after.csp).not.toContain('font-src');
    expect((await call('PATCH', '/branding', { logo_url: 'http://insecure.example/logo.png' })).status).toBe(400);
    expect((await call('PATCH', '/branding', { colors: { primary: 'red' } })).status).toBe(400);
    expect((await call('PATCH', '/branding', { colors: { primary: '#fff', page_background: { type: 'linear-gradient' } } })).status).toBe(400);
  });

  it('prompts: one experience, identifier and password together; other settings are 501', async () => {
    const settings = { universal_login_experience: 'new', identifier_first: false, webauthn_platform_first_factor: false };
    expect(await call('GET', '/prompts')).toEqual({ status: 200, body: settings });
    expect(await call('PATCH', '/prompts', settings)).toEqual({ status: 200, body: settings });
    expect(await call('PATCH', '/prompts', { identifier_first: true })).toMatchObject({ status: 501, body: { errorCode: 'not_offered', message: expect.stringContaining('Identifier-first') } });
    expect((await call('PATCH', '/prompts', { universal_login_experience: 'classic' })).status).toBe(501);
    expect((await call('GET', '/prompts/login/partials')).body).toEqual({});
    expect((await call('PUT', '/prompts/login/partials', { 'form-content-start': '<p>x</p>' })).status).toBe(501);
  });

  it('custom texts per language, in the pages in the tenant’s language', async () => {
    expect(await call('GET', '/prompts/login/custom-text/en')).toEqual({ status: 200, body: {} });
    // French, shipped: the tenant makes it its default language.
    expect((await call('PATCH', '/tenants/settings', { enabled_locales: ['fr', 'en'] })).status).toBe(200);
    const french = await hostedPage();
    expect(french.html).toContain('<html lang="fr">');
    expect(french.html).toContain('<h1>Connexion</h1>');
    expect(french.html).toContain('pour continuer vers <strong>Northwind Shop</strong>');
    expect(french.html).toContain('Mot de passe oublié ?');

    const texts = { login: { title: 'Bienvenue chez ${companyName}', buttonText: 'Entrer', description: 'Accédez à ${clientName}' } };
    expect(await call('PUT', '/prompts/login/custom-text/fr', texts)).toEqual({ status: 200, body: texts });
    expect((await call('GET', '/prompts/login/custom-text/fr')).body).toEqual(texts);
    const custom = await hostedPage();
    expect(custom.html).toContain(`<h1>Bienvenue chez ${server.server.prepared.bootstrap!.tenant.friendlyName}</h1>`);
    expect(custom.html).toContain('Accédez à <strong>Northwind Shop</strong>');
    expect(custom.html).toContain('>Entrer</button>');
    expect(custom.html).toContain('Mot de passe oublié ?');

    // Markup in a text is shown as text.
    await call('PUT', '/prompts/signup/custom-text/fr', { signup: { title: '<img src=x onerror=alert(1)>' } });
    expect((await hostedPage('signup')).html).toContain('<h1>&lt;img src=x onerror=alert(1)&gt;</h1>');

    // English is still the shipped English, and {} removes the French texts.
    expect((await call('GET', '/prompts/login/custom-text/en')).body).toEqual({});
    expect(await call('PUT', '/prompts/login/custom-text/fr', {})).toEqual({ status: 200, body: {} });
    expect((await hostedPage()).html).toContain('<h1>Connexion</h1>');

    expect((await call('PUT', '/prompts/login/custom-text/fr', { login: { notAKey: 'x' } })).body).toMatchObject({ statusCode: 400, message: expect.stringContaining('notAKey') });
    expect((await call('PUT', '/prompts/login/custom-text/fr', { 'login-id': { title: 'x' } })).status).toBe(400);
    expect((await call('PUT', '/prompts/login/custom-text/de', { login: { title: 'x' } })).status).toBe(400);
    expect((await call('PUT', '/prompts/mfa-otp/custom-text/en', { 'mfa-otp-challenge': { title: 'x' } })).status).toBe(501);
    // A prompt without a page reads as having no texts.
    expect(await call('GET', '/prompts/mfa-otp/custom-text/en')).toEqual({ status: 200, body: {} });
    await call('PATCH', '/tenants/settings', { enabled_locales: ['en'] });
    expect((await hostedPage()).html).toContain('<h1>Log in</h1>');
  });

  it('chooses the browser’s language among the tenant’s', () => {
    const tenant = { settings: { enabled_locales: ['en', 'fr'] } } as unknown as Tenant;
    expect(chooseLanguage(tenant, 'fr-CA,fr;q=0.9,en;q=0.5')).toBe('fr');
    expect(chooseLanguage(tenant, 'de-DE,de;q=0.9,fr;q=0.4')).toBe('fr');
    expect(chooseLanguage(tenant, 'de')).toBe('en');
    expect(chooseLanguage(tenant, undefined)).toBe('en');
    expect(chooseLanguage({ settings: {} } as unknown as Tenant, 'fr')).toBe('en');
  });

  it('bot detection and CAPTCHA: read as disabled, refused when a write would enable them', async () => {
    const disabled = { challenge_password_policy: 'never', challenge_passwordless_policy: 'never', challenge_password_reset_policy: 'never', allowlist: [], monitoring_mode_enabled: false };
    expect(await call('GET', '/attack-protection/bot-detection')).toEqual({ status: 200, body: disabled });
    expect(await call('PATCH', '/attack-protection/bot-detection', { ...disabled, bot_detection_level: 'medium' })).toEqual({ status: 200, body: disabled });
    expect(await call('PATCH', '/attack-protection/bot-detection', { challenge_password_policy: 'when_risky' })).toMatchObject({ status: 501, body: { errorCode: 'not_offered', message: expect.stringContaining('Bot detection') } });
    expect((await call('PATCH', '/attack-protection/bot-detection', { allowlist: ['10.0.0.1'] })).status).toBe(501);
    expect(await call('GET', '/attack-protection/captcha')).toEqual({ status: 200, body: {} });
    expect(await call('PATCH', '/attack-protection/captcha', {})).toEqual({ status: 200, body: {} });
    expect((await call('PATCH', '/attack-protection/captcha', { active_provider_id: 'recaptcha_v2', recaptcha_v2: { site_key: 'k', secret: 's' } })).status).toBe(501);
    expect(await call('GET', '/supplemental-signals')).toEqual({ status: 200, body: { akamai_enabled: false } });
    expect(await call('PATCH', '/supplemental-signals', { akamai_enabled: false })).toEqual({ status: 200, body: { akamai_enabled: false } });
    expect((await call('PATCH', '/supplemental-signals', { akamai_enabled: true })).status).toBe(501);
    expect(await call('GET', '/risk-assessments/settings')).toEqual({ status: 200, body: { enabled: false } });
    expect(await call('PATCH', '/risk-assessments/settings', { enabled: false })).toEqual({ status: 200, body: { enabled: false } });
    expect((await call('PATCH', '/risk-assessments/settings', { enabled: true })).status).toBe(501);
    expect((await call('PATCH', '/risk-assessments/settings/new-device', { remember_for: 0 })).status).toBe(200);
    expect((await call('PATCH', '/risk-assessments/settings/new-device', { remember_for: 7 })).status).toBe(501);
  });
});
