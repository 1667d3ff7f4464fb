/**
 * The hosted pages' markup (rendered to strings and inspected) and their behaviour in real Chromium under the
 * real CSP: no violations, the form_post page submits itself, the web_message page posts to its framing parent
 * on another origin at exactly that origin. Screenshots go to /tmp/screens/<page>-<viewport>.png.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerCommonResponses } from '../http/common-responses.js';
import { sendError } from '../http/error-handler.js';
import { launchBrowser, openPage, type BrowserSession } from '../test-support/browser.js';
import { ASSET_URLS, registerLoginAssets } from './assets.js';
import { brandColor, brandPalette, contrastRatio, DEFAULT_PRIMARY_COLOR, escapeHtml, hostedPageCsp, type PageContext } from './pages/chrome.js';
import { renderConsentPage } from './pages/consent.js';
import { renderForgotPasswordPage } from './pages/forgot-password.js';
import { renderFormPost } from './pages/form-post.js';
import { html } from './pages/html.js';
import { renderLoginPage } from './pages/login.js';
import { renderErrorPage, renderMessagePage } from './pages/message.js';
import { renderSignupPage } from './pages/signup.js';
import { renderWebMessage } from './pages/web-message.js';

const SCREENS = '/tmp/screens';
const XSS = '<script>alert(1)</script>';
/** A small wordmark, inline so the test needs no network (the CSP allows data: images). */
const LOGO = `data:image/svg+xml;base64,${Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="196" height="40" viewBox="0 0 196 40"><rect width="40" height="40" rx="10" fill="#0f766e"/><path d="M11 28 20 10l9 18h-5l-4-8-4 8z" fill="#fff"/><text x="50" y="28" font-family="DejaVu Sans,Arial,sans-serif" font-size="22" font-weight="700" fill="#102a27">Northwind</text></svg>',
).toString('base64')}`;

const CLIENT_LOGO = `data:image/svg+xml;base64,${Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="44" height="44" viewBox="0 0 44 44"><rect width="44" height="44" fill="#7c3aed"/><rect x="11" y="13" width="22" height="19" rx="3" fill="none" stroke="#fff" stroke-width="2.5"/><path d="M11 19h22M17 10v6M27 10v6" stroke="#fff" stroke-width="2.5"/></svg>',
).toString('base64')}`;

function context(branding: PageContext['branding'] = { name: 'Northwind Traders', logoUrl: LOGO, primaryColor: '#0f766e' }): PageContext {
  return { branding, cspNonce: randomBytes(18).toString('base64url') };
}

const form = { action: '/u/login?state=abc', csrfToken: 'csrf-token-1', transaction: 'tx-1' };

/** The attributes of every tag with this name, from markup these templates produce (double-quoted attributes). */
function tags(markup: string, name: string): Record<string, string>[] {
  return [...markup.matchAll(new RegExp(`<${name}\\b([^>]*)>`, 'g'))].map((match) =>
    Object.fromEntries([...(match[1] ?? '').matchAll(/([a-z-]+)(?:="([^"]*)")?/g)].map((attr) => [attr[1] ?? '', attr[2] ?? ''])),
  );
}

/** What every hosted form must carry, and every page must not: inline script, style attributes, foreign forms. */
function expectHostedForm(markup: string, fields: { csrf: string; transaction: string }): void {
  const forms = tags(markup, 'form');
  expect(forms.length).toBeGreaterThan(0);
  for (const attrs of forms) expect(attrs.method).toBe('post');
  const hidden = tags(markup, 'input').filter((attrs) => attrs.type === 'hidden');
  expect(hidden).toContainEqual(expect.objectContaining({ name: '_csrf', value: fields.csrf }));
  expect(hidden).toContainEqual(expect.objectContaining({ name: 'transaction', value: fields.transaction }));
  // Every visible input has exactly one <label for> naming its id.
  for (const input of tags(markup, 'input').filter((attrs) => attrs.type !== 'hidden')) {
    expect(input.id, JSON.stringify(input)).toBeTruthy();
    expect(tags(markup, 'label').filter((label) => label.for === input.id)).toHaveLength(1);
  }
  expectNoInlineCode(markup);
}

function expectNoInlineCode(markup: string): void {
  expect(markup).not.toMatch(/\sstyle=/i);
  expect(markup).not.toMatch(/\son[a-z]+=/i);
  expect(markup).not.toMatch(/javascript:/i);
  // Scripts are external or non-executed data blocks; nothing between script tags runs.
  for (const attrs of tags(markup, 'script')) expect(attrs.src !== undefined || attrs.type === 'application/json').toBe(true);
}

function autocompleteOf(markup: string): Record<string, string> {
  return Object.fromEntries(
    tags(markup, 'input')
      .filter((attrs) => attrs.type !== 'hidden')
      .map((attrs) => [attrs.name ?? '', attrs.autocomplete ?? '']),
  );
}

describe('escaping', () => {
  it('escapes the five HTML specials and the backtick', () => {
    expect(escapeHtml(`<a href="x" title='y'>&\`</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&#96;&lt;/a&gt;');
  });

  it('html`` escapes interpolated text and lists but keeps nested html`` as markup', () => {
    const item = (text: string) => html`<li>${text}</li>`;
    expect(html`<ul>${['<b>', '"q"'].map(item)}</ul>${undefined}${false}${null}`.value).toBe('<ul><li>&lt;b&gt;</li><li>&quot;q&quot;</li></ul>');
  });
});

describe('brand colour', () => {
  it('accepts only #rgb and #rrggbb, normalised to lower-case #rrggbb', () => {
    expect(brandColor('#0F766E')).toBe('#0f766e');
    expect(brandColor('#abc')).toBe('#aabbcc');
    for (const bad of ['red', '#abcd', '#12345g', '#0f766e;}body{display:none', 'url(x)', ' #abc', '#abc ', '', undefined]) {
      expect(brandColor(bad)).toBe(DEFAULT_PRIMARY_COLOR);
    }
  });

  it('puts text that contrasts on the button and darkens a pale colour for links and focus rings', () => {
    expect(brandPalette('#0f766e').onBrand).toBe('#ffffff');
    const yellow = brandPalette('#ffcc00');
    expect(yellow.onBrand).toBe('#111418');
    expect(contrastRatio(yellow.ink, '#ffffff')).toBeGreaterThanOrEqual(4.5);
    expect(brandPalette('#0f766e').ink).toBe('#0f766e');
  });

  it('reaches the page only as a validated custom property inside the nonce style element', () => {
    const ctx = context({ name: 'Evil', primaryColor: 'red;}</style><script>alert(1)</script>' });
    const page = renderLoginPage(ctx, { ...form, clientName: 'App', identifierKind: 'email' });
    const styles = [...page.matchAll(/<style nonce="([^"]+)">([^<]*)<\/style>/g)];
    expect(styles).toHaveLength(1);
    expect(styles[0]?.[1]).toBe(ctx.cspNonce);
    expect(styles[0]?.[2]).toBe(`:root{--brand:${DEFAULT_PRIMARY_COLOR};--on-brand:#ffffff;--brand-ink:${DEFAULT_PRIMARY_COLOR}}`);
    expect(page).not.toContain('<script>alert(1)');
  });
});

describe('hostedPageCsp', () => {
  const nonce = 'bm9uY2Utbm9uY2Utbm9uY2U';

  it('allows only self scripts, nonce styles, and nothing framing the page', () => {
    expect(hostedPageCsp(nonce)).toBe(
      `default-src 'none'; script-src 'self'; style-src 'self' 'nonce-${nonce}'; img-src 'self' https: data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    );
  });

  it('widens form-action and frame-ancestors to origins, never to whole URLs or injected directives', () => {
    const csp = hostedPageCsp(nonce, { formAction: ['https://app.example.com/callback?x=1'], frameAncestors: ['https://a.example', 'https://a.example/', 'http://localhost:3000'] });
    expect(csp).toContain("form-action 'self' https://app.example.com;");
    expect(csp).toContain('frame-ancestors https://a.example http://localhost:3000;');
    expect(() => hostedPageCsp(nonce, { frameAncestors: ["https://a.example; script-src 'unsafe-inline'"] })).toThrow(TypeError);
    expect(() => hostedPageCsp(nonce, { formAction: ['*'] })).toThrow(TypeError);
    expect(() => hostedPageCsp("abc'; script-src *")).toThrow(TypeError);
  });
});

describe('page markup', () => {
  it('log in: labelled identifier and password, autocomplete, CSRF and transaction, links', () => {
    const page = renderLoginPage(context(), {
      ...form,
      clientName: 'My App',
      identifierKind: 'email',
      signupUrl: '/u/signup?state=abc',
      forgotPasswordUrl: '/u/reset-password?state=abc',
    });
    expectHostedForm(page, { csrf: 'csrf-token-1', transaction: 'tx-1' });
    // A log-in identifier is "username" to password managers even when it is an email address.
    expect(autocompleteOf(page)).toEqual({ username: 'username', password: 'current-password' });
    expect(tags(page, 'input').find((attrs) => attrs.name === 'username')?.type).toBe('email');
    expect(tags(page, 'form')[0]?.action).toBe('/u/login?state=abc');
    expect(tags(page, 'a').map((attrs) => attrs.href)).toEqual(['/u/reset-password?state=abc', '/u/signup?state=abc']);
  });

  it('log in: a script in the client name, error or identifier shows as text', () => {
    const page = renderLoginPage(context({ name: XSS }), {
      ...form,
      clientName: XSS,
      identifierKind: 'username',
      identifier: `"><script>x()</script>`,
      error: XSS,
    });
    expect(page).not.toContain('<script>');
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(tags(page, 'input').find((attrs) => attrs.name === 'username')?.value).toBe('&quot;&gt;&lt;script&gt;x()&lt;/script&gt;');
    expect(page).toMatch(/role="alert"[^>]*>.*&lt;script&gt;alert\(1\)/s);
    expectNoInlineCode(page);
  });

  it('sign up: email, optional username, new password tied to its rules', () => {
    const withUsername = renderSignupPage(context(), {
      ...form,
      clientName: 'My App',
      requireUsername: true,
      email: 'ada@example.com',
      passwordRules: {
        rules: [
          { code: 'lengthAtLeast', message: 'At least 12 characters', verified: true },
          { code: 'custom', message: XSS, verified: false },
        ],
        checked: true,
      },
      loginUrl: '/u/login?state=abc',
    });
    expectHostedForm(withUsername, { csrf: 'csrf-token-1', transaction: 'tx-1' });
    expect(autocompleteOf(withUsername)).toEqual({ email: 'email', username: 'username', password: 'new-password' });
    expect(tags(withUsername, 'input').find((attrs) => attrs.name === 'password')?.['aria-describedby']).toBe('password-rules');
    expect(withUsername).toContain('<li class="rule rule-unmet"><span class="visually-hidden">Still needed: </span>&lt;script&gt;alert(1)&lt;/script&gt;</li>');
    expect(withUsername).toContain('<li class="rule rule-met"><span class="visually-hidden">Done: </span>At least 12 characters</li>');
    expect(tags(withUsername, 'input').find((attrs) => attrs.name === 'password')?.['aria-invalid']).toBe('true');

    const emailOnly = renderSignupPage(context(), { ...form, clientName: 'My App', requireUsername: false, loginUrl: '/u/login' });
    expect(autocompleteOf(emailOnly)).toEqual({ email: 'email', password: 'new-password' });
  });

  it('consent: accept and deny buttons, escaped scopes and names', () => {
    const page = renderConsentPage(context(), {
      ...form,
      clientName: XSS,
      userLabel: 'ada@example.com',
      audienceName: 'Calendar API',
      scopes: [
        { name: 'read:events', description: 'Read your events' },
        { name: 'offline_access', description: XSS },
      ],
    });
    expectHostedForm(page, { csrf: 'csrf-token-1', transaction: 'tx-1' });
    const buttons = tags(page, 'button');
    expect(buttons.map((attrs) => [attrs.name, attrs.value, attrs.type])).toEqual([
      ['decision', 'accept', 'submit'],
      ['decision', 'deny', 'submit'],
    ]);
    expect(page).not.toContain('<script>');
    expect(page).toContain('read:events');
  });

  it('forgot password: asks for an email, then a "check your email" state without a form', () => {
    const ask = renderForgotPasswordPage(context(), { action: '/u/reset-password', csrfToken: 'c2', transaction: 'tx-2', loginUrl: '/u/login' });
    expectHostedForm(ask, { csrf: 'c2', transaction: 'tx-2' });
    expect(autocompleteOf(ask)).toEqual({ email: 'email' });
    // Without a transaction (a link from an email, say) the field is still there, empty.
    expectHostedForm(renderForgotPasswordPage(context(), { action: '/r', csrfToken: 'c3' }), { csrf: 'c3', transaction: '' });

    const sent = renderForgotPasswordPage(context(), { action: '/r', csrfToken: 'c2', sent: true, email: XSS });
    expect(tags(sent, 'form')).toHaveLength(0);
    expect(sent).toContain('Check your email');
    expect(sent).not.toContain('<script>');
  });

  it('error and message pages escape everything and carry no inline code', () => {
    const error = renderErrorPage(context(), { title: XSS, error: 'invalid_request', description: XSS, requestId: 'req-1' });
    expect(error).not.toContain('<script>');
    expect(error).toContain('<dd>invalid_request</dd>');
    expect(error).toContain('<dd>req-1</dd>');
    expectNoInlineCode(error);
    const message = renderMessagePage(context(), { title: 'You are logged out', message: XSS, linkUrl: 'https://app.example/?a=1&b=2', linkText: 'Back' });
    expect(message).toContain('href="https://app.example/?a=1&amp;b=2"');
    expect(message).not.toContain('<script>');
    expectNoInlineCode(message);
  });

  it('form_post: every field hidden and escaped, an external script, a Continue button', () => {
    const page = renderFormPost({ action: 'https://app.example/cb', fields: { code: 'abc', state: `a"b<c>+&d` } });
    expect(tags(page, 'input')).toEqual([
      { type: 'hidden', name: 'code', value: 'abc' },
      { type: 'hidden', name: 'state', value: 'a&quot;b&lt;c&gt;+&amp;d' },
    ]);
    expect(tags(page, 'script')).toEqual([{ src: ASSET_URLS.formPost, defer: '' }]);
    expect(page).toContain('>Continue</button>');
    expectNoInlineCode(page);
  });

  it('web_message: a JSON data block that cannot break out of its element, and the exact target origin', () => {
    const page = renderWebMessage({ targetOrigin: 'https://app.example:8443', response: { state: '</script><script>alert(1)</script>', code: 'c' } });
    expect(page).not.toContain('</script><script>');
    const data = /<script type="application\/json" id="authorization-response">([^<]*)<\/script>/.exec(page)?.[1];
    expect(JSON.parse(data ?? '')).toEqual({ state: '</script><script>alert(1)</script>', code: 'c' });
    expect(page).toContain('data-target-origin="https://app.example:8443"');
    expectNoInlineCode(page);
    for (const bad of ['*', 'null', 'javascript:alert(1)', 'not a url']) expect(() => renderWebMessage({ targetOrigin: bad, response: {} })).toThrow(TypeError);
  });
});

describe('assets', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = Fastify().withTypeProvider<TypeBoxTypeProvider>();
    // As the server sets it up: the error bodies the routes refer to, and errors rendered in their family's shape.
    registerCommonResponses(app);
    app.setErrorHandler((err, request, reply) => sendError(err, request, reply));
    registerLoginAssets(app);
    await app.ready();
  });
  afterAll(() => app.close());

  it('serves each asset under its content hash, immutable, with its content type', async () => {
    const expected = { stylesheet: 'text/css; charset=utf-8', formPost: 'text/javascript; charset=utf-8', webMessage: 'text/javascript; charset=utf-8' };
    for (const [key, type] of Object.entries(expected)) {
      const url = ASSET_URLS[key as keyof typeof ASSET_URLS];
      expect(url).toMatch(/^\/login\/assets\/[a-z-]+\.[0-9a-f]{16}\.(css|js)$/);
      const response = await app.inject({ url });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toBe(type);
      expect(response.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(response.body.length).toBeGreaterThan(100);
    }
    expect((await app.inject({ url: '/login/assets/login.0000000000000000.css' })).statusCode).toBe(404);
  });
});

const VIEWPORTS = { desktop: { width: 1280, height: 800 }, mobile: { width: 360, height: 740 } } as const;

/** Each page as a user meets it, rendered with sample data. */
const PAGES: Record<string, (ctx: PageContext) => string> = {
  login: (ctx) =>
    renderLoginPage(ctx, {
      ...form,
      clientName: 'Northwind Portal',
      identifierKind: 'email',
      signupUrl: '/u/signup',
      forgotPasswordUrl: '/u/reset-password',
    }),
  'login-error': (ctx) =>
    renderLoginPage(ctx, {
      ...form,
      clientName: 'Northwind Portal',
      identifierKind: 'email_or_username',
      identifier: 'ada@example.com',
      error: 'Wrong email or password.',
      forgotPasswordUrl: '/u/reset-password',
    }),
  signup: (ctx) =>
    renderSignupPage(
      { ...ctx, branding: { name: 'Acme Corporation', primaryColor: 'not-a-colour' } },
      {
        ...form,
        clientName: 'Acme Dashboard',
        requireUsername: true,
        passwordRules: {
          rules: [
            { code: 'lengthAtLeast', message: 'At least 12 characters in length', verified: true },
            {
              code: 'containsAtLeast',
              message: 'Contain at least 3 of the following 4 types of characters:',
              verified: false,
              items: [
                { code: 'lowerCase', message: 'lower case letters (a-z)', verified: true },
                { code: 'upperCase', message: 'upper case letters (A-Z)', verified: false },
                { code: 'numbers', message: 'numbers (i.e. 0-9)', verified: true },
                { code: 'specialCharacters', message: 'special characters (e.g. !@#$%^&*)', verified: false },
              ],
            },
          ],
          checked: true,
        },
        error: 'Choose a stronger password: it must meet each rule marked as still needed below.',
        loginUrl: '/u/login',
      },
    ),
  consent: (ctx) =>
    renderConsentPage(
      { ...ctx, branding: { name: 'Sunbeam', primaryColor: '#fc0' } },
      {
        ...form,
        clientName: 'Calendar Sync',
        clientLogoUrl: CLIENT_LOGO,
        userLabel: 'ada.lovelace@example.com',
        audienceName: 'Sunbeam Calendar API',
        scopes: [
          { name: 'openid', description: 'Confirm your identity' },
          { name: 'read:events', description: 'Read your calendar events' },
          { name: 'write:events', description: 'Create and change events on your calendars' },
          { name: 'offline_access', description: 'Keep this access when you are not using the app' },
        ],
      },
    ),
  // Unbroken long names and messages must wrap inside the card, never widen the page at 360 px.
  'signup-long-names': (ctx) =>
    renderSignupPage(
      { ...ctx, branding: { name: 'Internationale-Handelsgesellschaft-für-Schiffsbedarf-und-Logistik', primaryColor: '#7c3aed' } },
      {
        ...form,
        clientName: 'ThisApplicationNameHasNoSpacesAtAllAndKeepsGoing',
        requireUsername: false,
        email: 'someone.with.a.very.long.address@subdomain.example-company.com',
        error: 'The user already exists: someone.with.a.very.long.address@subdomain.example-company.com',
        loginUrl: '/u/login',
      },
    ),
  'forgot-password': (ctx) => renderForgotPasswordPage(ctx, { action: '/u/reset-password', csrfToken: 'c', transaction: 't', loginUrl: '/u/login' }),
  'forgot-password-sent': (ctx) =>
    renderForgotPasswordPage(ctx, { action: '/u/reset-password', csrfToken: 'c', sent: true, email: 'ada@example.com', loginUrl: '/u/login' }),
  error: (ctx) =>
    renderErrorPage(ctx, {
      title: 'Something went wrong',
      error: 'invalid_request',
      description: 'The redirect_uri "https://evil.example/cb" is not among the callback URLs of this application.',
      requestId: '6f1d2c4e-8b7a-4e39-9a51-0c2d7f3b9e10',
    }),
  'logged-out': (ctx) =>
    renderMessagePage(ctx, { title: 'You are logged out', message: 'You have been signed out of Northwind Traders.', linkUrl: '/u/login', linkText: 'Log in again' }),
};

describe('in Chromium', () => {
  let browser: BrowserSession;
  /** The identity service's origin: hosted pages and assets. */
  let service: FastifyInstance;
  let serviceOrigin: string;
  /** A client application on another origin: the form_post target and the web_message parent. */
  let client: FastifyInstance;
  let clientOrigin: string;
  const posted: Record<string, string>[] = [];

  const listen = async (app: FastifyInstance) => {
    await app.listen({ port: 0, host: '127.0.0.1' });
    return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  };

  beforeAll(async () => {
    mkdirSync(SCREENS, { recursive: true });
    service = Fastify().withTypeProvider<TypeBoxTypeProvider>();
    // As the server sets it up: the error bodies the routes refer to, and errors rendered in their family's shape.
    registerCommonResponses(service);
    service.setErrorHandler((err, request, reply) => sendError(err, request, reply));
    registerLoginAssets(service);
    service.get<{ Params: { name: string } }>('/page/:name', (request, reply) => {
      const render = PAGES[request.params.name];
      if (!render) return reply.code(404).send();
      const ctx = context();
      return reply.type('text/html; charset=utf-8').header('content-security-policy', hostedPageCsp(ctx.cspNonce)).send(render(ctx));
    });
    service.get('/form-post', (_request, reply) => {
      const nonce = randomBytes(18).toString('base64url');
      return reply
        .type('text/html; charset=utf-8')
        .header('content-security-policy', hostedPageCsp(nonce, { formAction: [clientOrigin] }))
        .send(renderFormPost({ action: `${clientOrigin}/callback`, fields: { code: 'code-123', state: 'a b+c&d=<e>"', iss: serviceOrigin + '/' } }));
    });
    service.get<{ Querystring: { target?: string } }>('/web-message', (request, reply) => {
      const nonce = randomBytes(18).toString('base64url');
      return (
        reply
          .type('text/html; charset=utf-8')
          .header('content-security-policy', hostedPageCsp(nonce, { frameAncestors: [clientOrigin] }))
          // What the server's default headers add: frame-ancestors must win over it.
          .header('x-frame-options', 'DENY')
          .send(renderWebMessage({ targetOrigin: request.query.target ?? clientOrigin, response: { access_token: 'at-1', state: 'st&<"1', token_type: 'Bearer' } }))
      );
    });

    client = Fastify();
    client.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) =>
      done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );
    client.post('/callback', (request, reply) => {
      posted.push(request.body as Record<string, string>);
      return reply.type('text/html').send('<!doctype html><link rel="icon" href="data:,"><title>callback</title><p>signed in</p>');
    });
    // The parent page records what reaches it; being the test's own page, it may use inline script.
    client.get<{ Querystring: { frame: string } }>('/parent', (request, reply) =>
      reply
        .type('text/html')
        .send(
          `<!doctype html><link rel="icon" href="data:,"><title>parent</title><script>window.received = []; addEventListener('message', (event) => received.push({ origin: event.origin, data: event.data }));</script><iframe src="${escapeHtml(request.query.frame)}"></iframe>`,
        ),
    );
    [serviceOrigin, clientOrigin] = await Promise.all([listen(service), listen(client)]);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await service?.close();
    await client?.close();
  });

  /** Console errors and failed requests, CSP violations among them. */
  function watch(page: Page): string[] {
    const problems: string[] = [];
    page.on('console', (message) => message.type() === 'error' && problems.push(`${message.text()} ${message.location().url}`));
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('requestfailed', (request) => problems.push(`${request.url()}: ${request.failure()?.errorText}`));
    return problems;
  }

  it('renders every page at desktop and 360 px under the CSP, styled, labelled, without horizontal scrolling', async (test) => {
    const page = await openPage(browser, test);
    const problems = watch(page);
    for (const [viewportName, viewport] of Object.entries(VIEWPORTS)) {
      await page.setViewportSize(viewport);
      for (const name of Object.keys(PAGES)) {
        const response = await page.goto(`${serviceOrigin}/page/${name}`);
        expect(response?.status(), name).toBe(200);
        const facts = (await page.evaluate(`(() => {
          const inputs = [...document.querySelectorAll('input:not([type=hidden])')];
          const button = document.querySelector('.button-primary');
          return {
            unlabelled: inputs.filter((input) => input.labels.length !== 1).map((input) => input.name),
            buttonBackground: button ? getComputedStyle(button).backgroundColor : null,
            cardRadius: getComputedStyle(document.querySelector('.card')).borderTopLeftRadius,
            overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
          };
        })()`)) as { unlabelled: string[]; buttonBackground: string | null; cardRadius: string; overflow: number };
        expect(facts.unlabelled, name).toEqual([]);
        expect(facts.cardRadius, `${name}: stylesheet applied`).not.toBe('0px');
        expect(facts.overflow, `${name}: no horizontal scroll`).toBe(0);
        if (name === 'login') expect(facts.buttonBackground, 'tenant colour via the nonce style').toBe('rgb(15, 118, 110)');
        if (name === 'signup') expect(facts.buttonBackground, 'invalid colour falls back').toBe('rgb(53, 89, 224)');
        await page.screenshot({ path: `${SCREENS}/${name}-${viewportName}.png`, fullPage: true });
      }
    }
    expect(problems).toEqual([]);
  });

  it('shows a visible focus ring in the tenant colour on inputs and buttons', async (test) => {
    const page = await openPage(browser, test);
    await page.setViewportSize(VIEWPORTS.desktop);
    await page.goto(`${serviceOrigin}/page/login`);
    const focused = (): Promise<unknown> =>
      page.evaluate(
        "(() => { const el = document.activeElement; const s = getComputedStyle(el); return { tag: el.tagName, name: el.name || el.textContent, boxShadow: s.boxShadow, outline: s.outlineStyle + ' ' + s.outlineColor }; })()",
      );
    // Keyboard order: the identifier (autofocused; focused here too, so a slow machine cannot race autofocus),
    // the password, the reset link, Continue.
    await page.locator('#username').focus();
    await page.keyboard.press('Tab');
    // 30% of the tenant colour #0f766e, spread 3px, once the ring has faded in (however long a loaded machine takes).
    await expect.poll(focused).toMatchObject({ tag: 'INPUT', name: 'password', boxShadow: 'color(srgb 0.0588235 0.462745 0.431373 / 0.3) 0px 0px 0px 3px' });
    await page.keyboard.press('Tab');
    expect(await focused()).toMatchObject({ tag: 'A', name: 'Forgot password?', outline: 'solid rgb(15, 118, 110)' });
    await page.keyboard.press('Tab');
    expect(await focused()).toMatchObject({ tag: 'BUTTON', name: 'Continue', outline: 'solid rgb(15, 118, 110)' });
    await page.screenshot({ path: `${SCREENS}/login-focus-desktop.png` });
  });

  it('form_post submits itself to the client, every field intact', async (test) => {
    const page = await openPage(browser, test);
    const problems = watch(page);
    await Promise.all([page.waitForURL(`${clientOrigin}/callback`), page.goto(`${serviceOrigin}/form-post`)]);
    expect(posted).toEqual([{ code: 'code-123', state: 'a b+c&d=<e>"', iss: `${serviceOrigin}/` }]);
    expect(problems).toEqual([]);
  });

  it('form_post without script shows a Continue button that submits', async (test) => {
    const page = await openPage(browser, test);
    // The script answered empty: what a browser without JavaScript sees.
    await page.route('**/login/assets/form-post.*.js', (route) => route.fulfill({ contentType: 'text/javascript', body: '' }));
    for (const [viewportName, viewport] of Object.entries(VIEWPORTS)) {
      await page.setViewportSize(viewport);
      await page.goto(`${serviceOrigin}/form-post`);
      await page.screenshot({ path: `${SCREENS}/form-post-${viewportName}.png`, fullPage: true });
    }
    posted.length = 0;
    await Promise.all([page.waitForURL(`${clientOrigin}/callback`), page.getByRole('button', { name: 'Continue' }).click()]);
    expect(posted).toHaveLength(1);
  });

  it('web_message posts the exact response to the framing parent on another origin, addressed to that origin only', async (test) => {
    const page = await openPage(browser, test);
    const problems = watch(page);
    await page.goto(`${clientOrigin}/parent?frame=${encodeURIComponent(`${serviceOrigin}/web-message`)}`);
    await page.waitForFunction('window.received.length > 0');
    expect(await page.evaluate('window.received')).toEqual([
      {
        origin: serviceOrigin,
        data: { type: 'authorization_response', response: { access_token: 'at-1', state: 'st&<"1', token_type: 'Bearer' } },
      },
    ]);
    expect(problems).toEqual([]);
  });

  it('web_message addressed to another origin never reaches the parent', async (test) => {
    const page = await openPage(browser, test);
    const frameUrl = `${serviceOrigin}/web-message?target=${encodeURIComponent('http://127.0.0.1:9')}`;
    // Chromium says so when it drops a message whose target origin is not the recipient's: wait for that, not a time.
    const dropped = page.waitForEvent('console', (message) => message.text().includes("does not match the recipient window's origin"));
    await page.goto(`${clientOrigin}/parent?frame=${encodeURIComponent(frameUrl)}`);
    expect((await dropped).text()).toContain("target origin provided ('http://127.0.0.1:9')");
    expect(page.frames().find((candidate) => candidate.url().startsWith(serviceOrigin))).toBeDefined();
    expect(await page.evaluate('window.received')).toEqual([]);
  });

  it('a hosted page other than web_message cannot be framed', async (test) => {
    const page = await openPage(browser, test);
    const problems = watch(page);
    await page.goto(`${clientOrigin}/parent?frame=${encodeURIComponent(`${serviceOrigin}/page/login`)}`);
    // The refusal is reported on the console: wait for it rather than for a fixed time.
    await expect.poll(() => problems.some((problem) => problem.includes('frame-ancestors'))).toBe(true);
    const frame = page.frames().find((candidate) => candidate !== page.mainFrame());
    // Blocked by frame-ancestors 'none': the frame shows an error document, not the form.
    expect(await frame?.locator('#password').count()).toBe(0);
    expect(problems.some((problem) => problem.includes('frame-ancestors'))).toBe(true);
  });
});
