/**
 * The texts of the hosted pages, per prompt, screen and language, under the reference's names (its
 * `/api/v2/prompts/{prompt}/custom-text/{language}` keys): what this server ships (English and French), and a
 * tenant's own texts over them (TenantSettings.prompts.custom_text). Only the prompts, screens and keys the pages
 * actually show are accepted, so a custom text is never stored and then silently unused.
 *
 * `${clientName}` and `${companyName}` in a text are replaced by the application's and the tenant's names; texts
 * are always escaped by the page (html.ts), so a text cannot add markup.
 */
import type { Tenant } from '../store/tenants.js';

/** Languages with shipped texts; `enabled_locales` may name only these. */
export const SHIPPED_LANGUAGES = ['en', 'fr'] as const;
export type Language = (typeof SHIPPED_LANGUAGES)[number];

type Screen = Record<string, string>;
type Prompt = Record<string, Screen>;

const EN = {
  login: {
    login: {
      pageTitle: 'Log in',
      title: 'Log in',
      description: 'to continue to ${clientName}',
      emailPlaceholder: 'Email address',
      usernamePlaceholder: 'Username',
      emailOrUsernamePlaceholder: 'Email or username',
      passwordPlaceholder: 'Password',
      forgotPasswordText: 'Forgot password?',
      buttonText: 'Continue',
      signupActionText: 'Don’t have an account?',
      signupActionLinkText: 'Sign up',
    },
  },
  signup: {
    signup: {
      pageTitle: 'Sign up',
      title: 'Create your account',
      description: 'to continue to ${clientName}',
      emailPlaceholder: 'Email address',
      usernamePlaceholder: 'Username',
      passwordPlaceholder: 'Password',
      buttonText: 'Sign up',
      loginActionText: 'Already have an account?',
      loginActionLinkText: 'Log in',
    },
  },
} satisfies Record<string, Prompt>;

export type PromptName = keyof typeof EN;

const FR: typeof EN = {
  login: {
    login: {
      pageTitle: 'Connexion',
      title: 'Connexion',
      description: 'pour continuer vers ${clientName}',
      emailPlaceholder: 'Adresse e-mail',
      usernamePlaceholder: 'Nom d’utilisateur',
      emailOrUsernamePlaceholder: 'E-mail ou nom d’utilisateur',
      passwordPlaceholder: 'Mot de passe',
      forgotPasswordText: 'Mot de passe oublié ?',
      buttonText: 'Continuer',
      signupActionText: 'Pas encore de compte ?',
      signupActionLinkText: 'Créer un compte',
    },
  },
  signup: {
    signup: {
      pageTitle: 'Inscription',
      title: 'Créez votre compte',
      description: 'pour continuer vers ${clientName}',
      emailPlaceholder: 'Adresse e-mail',
      usernamePlaceholder: 'Nom d’utilisateur',
      passwordPlaceholder: 'Mot de passe',
      buttonText: 'S’inscrire',
      loginActionText: 'Vous avez déjà un compte ?',
      loginActionLinkText: 'Se connecter',
    },
  },
};

const SHIPPED: Record<Language, typeof EN> = { en: EN, fr: FR };

export type LoginTexts = (typeof EN)['login']['login'];
export type SignupTexts = (typeof EN)['signup']['signup'];
/** The shipped English texts, what a page shows when given none. */
export const ENGLISH = EN;

/** The prompts with custom text, each with its screens and their keys. */
export function promptScreens(prompt: string): Record<string, readonly string[]> | undefined {
  if (!Object.hasOwn(EN, prompt)) return undefined;
  return Object.fromEntries(Object.entries(EN[prompt as PromptName]).map(([screen, keys]) => [screen, Object.keys(keys)]));
}

export function isShippedLanguage(value: string): value is Language {
  return (SHIPPED_LANGUAGES as readonly string[]).includes(value);
}

/** The tenant's languages, the first being its default (`enabled_locales`; English when never set). */
export function enabledLanguages(tenant: Tenant): Language[] {
  const enabled = (tenant.settings.enabled_locales ?? []).filter(isShippedLanguage);
  return enabled.length > 0 ? enabled : ['en'];
}

/** The page's language: the first of the browser's Accept-Language the tenant enables, else its default. */
export function chooseLanguage(tenant: Tenant, acceptLanguage: string | undefined): Language {
  const enabled = enabledLanguages(tenant);
  const wanted = (acceptLanguage ?? '')
    .split(',')
    .map((part) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
      return { language: tag.trim().toLowerCase().split('-')[0]!, q: q === undefined ? 1 : Number(q) };
    })
    .filter((entry) => entry.language && entry.q > 0)
    .sort((a, b) => b.q - a.q);
  for (const { language } of wanted) {
    const match = enabled.find((l) => l === language);
    if (match) return match;
  }
  return enabled[0]!;
}

/** One screen's texts in `language`: the tenant's own over the shipped ones, placeholders filled in. */
export function screenTexts<P extends PromptName>(
  tenant: Tenant,
  prompt: P,
  screen: keyof (typeof EN)[P] & string,
  language: Language,
): Record<keyof (typeof EN)[P][typeof screen] & string, string> {
  const shipped = (SHIPPED[language][prompt] as Prompt)[screen]!;
  const custom = tenant.settings.prompts?.custom_text?.[prompt]?.[language]?.[screen] ?? {};
  const companyName = tenant.friendlyName || tenant.name;
  const out: Record<string, string> = {};
  for (const [key, text] of Object.entries({ ...shipped, ...custom })) {
    // `${clientName}` stays for the page, which shows the name emphasised (pages/texts.ts).
    out[key] = text.replaceAll('${companyName}', companyName);
  }
  return out as Record<keyof (typeof EN)[P][typeof screen] & string, string>;
}
