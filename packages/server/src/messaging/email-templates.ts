/**
 * The tenant's edited email templates (/api/v2/email-templates/{name}), rendered with Liquid through liquidjs,
 * sandboxed:
 *  - no file system: `templates: {}` gives the engine an empty in-memory file set, so `include`, `render` and
 *    `layout` find nothing (a render error, refused when the template is saved);
 *  - nothing of the process: the only values a template sees are the ones passed here (no globals), and
 *    `ownPropertyOnly` keeps it off prototypes (`constructor` and the like read as empty);
 *  - bounded: parse, render and memory limits, so a template cannot hold the email worker up;
 *  - output is HTML-escaped, since values such as the user's name come from users.
 * A template that is saved but fails at send time (say a value it needs is missing) falls back to the built-in
 * email rather than sending nothing.
 */
import { Liquid } from 'liquidjs';
import type { Kysely } from 'kysely';
import { findEmailTemplate, type EmailTemplateRow } from '../store/email-settings.js';
import type { Database } from '../store/schema.js';
import type { Tenant } from '../store/tenants.js';
import type { User } from '../store/users.js';
import type { EmailContent } from './templates.js';

/** The emails this server sends, by the reference's template names. */
export const SENT_TEMPLATES = ['verify_email', 'reset_email', 'blocked_account', 'mfa_oob_code', 'enrollment_email'] as const;
export type SentTemplate = (typeof SENT_TEMPLATES)[number];

/** The reference's other template names: emails this server does not send (a write is refused as not offered). */
export const UNSENT_TEMPLATES = [
  'verify_email_by_code',
  'reset_email_by_code',
  'welcome_email',
  'stolen_credentials',
  'user_invitation',
  'change_password',
  'password_reset',
  'async_approval',
] as const;

export function isSentTemplate(name: string): name is SentTemplate {
  return (SENT_TEMPLATES as readonly string[]).includes(name);
}

const engine = new Liquid({
  templates: {},
  ownPropertyOnly: true,
  strictFilters: true,
  outputEscape: 'escape',
  parseLimit: 100_000,
  renderLimit: 1_000,
  memoryLimit: 10_000_000,
});

/**
 * What a template may use: `url`, `user`, `tenant`, `friendly_name`, `application`, as the reference names them;
 * `code` in mfa_oob_code (the one-time code; that email has no link, so `url` is empty there).
 */
export interface TemplateVariables {
  url: string;
  code?: string;
  user: Record<string, unknown>;
  tenant: string;
  friendly_name: string;
  application?: { name: string; clientID: string };
}

export function templateVariables(tenant: Tenant, user: User, url: string, application?: { name: string; clientID: string }): TemplateVariables {
  return {
    url,
    user: {
      email: user.email,
      email_verified: user.email_verified,
      user_id: user.user_id,
      ...user.profile,
      user_metadata: user.user_metadata,
      app_metadata: user.app_metadata,
    },
    tenant: tenant.name,
    friendly_name: tenant.friendlyName || tenant.name,
    ...(application && { application }),
  };
}

const SAMPLE: TemplateVariables = {
  url: 'https://example.com/u/email-verification?ticket=sample',
  user: { email: 'jane@example.com', email_verified: false, user_id: 'auth0|sample', name: 'Jane', user_metadata: {}, app_metadata: {} },
  tenant: 'sample',
  friendly_name: 'Sample',
  application: { name: 'Sample app', clientID: 'sample' },
  code: '123456',
};

/** Why a template source cannot be used (parse error, or a failed trial render), or undefined when it can. */
export async function templateProblem(source: string): Promise<string | undefined> {
  try {
    await engine.parseAndRender(source, SAMPLE);
    return undefined;
  } catch (err) {
    return (err as Error).message.split('\n')[0]!.slice(0, 300);
  }
}

export async function renderTemplate(source: string, variables: TemplateVariables): Promise<string> {
  return String(await engine.parseAndRender(source, variables));
}

/** The tenant's template of this email, when one was saved. */
export function tenantTemplate(db: Kysely<Database>, tenantId: string, name: SentTemplate): Promise<EmailTemplateRow | undefined> {
  return findEmailTemplate(db, tenantId, name);
}

/** The email as the tenant's template makes it, or the built-in one when there is none or it fails. */
export async function composeEmail(
  template: EmailTemplateRow | undefined,
  variables: TemplateVariables,
  builtIn: EmailContent,
): Promise<EmailContent & { from?: string }> {
  if (!template) return builtIn;
  try {
    const html = await renderTemplate(template.body, variables);
    const subject = template.subject ? (await renderTemplate(template.subject, variables)).trim() : builtIn.subject;
    const from = template.from_address ? (await renderTemplate(template.from_address, variables)).trim() : undefined;
    // The plain-text part: the subject and the link (or the code), which is what a text-only reader needs.
    const text = `${subject}\n\n${variables.code ?? variables.url}\n`;
    return { subject: subject || builtIn.subject, html, text, ...(from && { from }) };
  } catch {
    return builtIn;
  }
}
