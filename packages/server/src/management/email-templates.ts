/**
 * /api/v2/email-templates (the reference's Email Templates): POST (201, 409 when it exists), and per name GET,
 * PATCH (404 until saved), PUT (create or replace). Liquid, rendered sandboxed by liquidjs
 * (messaging/email-templates.ts); a template that does not parse, or fails a trial render (an `include` of a
 * file, say), is a 400 naming the problem.
 *
 * Fields as the reference: `body`, `from`, `subject` (Liquid too), `urlLifetimeInSeconds` (the link's
 * lifetime), `enabled` (false: the email is not sent), `syntax` (`liquid`), `resultUrl` (an http(s) URL the
 * browser goes to once the link has done its work, with `success` and `message` as the reference adds them:
 * login/result-redirect.ts) and `includeEmailInRedirect` (the user's `email` added to it; false unless set, so
 * an address leaves only where the tenant asked).
 *
 * Only the emails this server sends can be edited: verify_email, reset_email, blocked_account (the brute-force
 * notice, whose `url` lifts the block or a factor lock), mfa_oob_code (the email factor's code, as `code`) and
 * enrollment_email (an MFA enrollment ticket, whose `url` is the ticket's link). The reference's
 * other names read as 404 and are refused on write with 501 (not offered): storing them would pretend they are
 * sent. A link setting an email has no use for (the unblock link lasts as long as the block; a code email has
 * no link) is refused rather than stored unused.
 */
import { Type, type Static } from '@fastify/type-provider-typebox';
import { Conflict, InvalidInput, NotFound, NotOffered } from '../http/errors.js';
import { errorResponses } from '../http/responses.js';
import { isSentTemplate, SENT_TEMPLATES, templateProblem, UNSENT_TEMPLATES } from '../messaging/email-templates.js';
import type { App, Services } from '../services.js';
import { ConcurrentChange, concurrentChangeConflict, nextVersion, retryOnConcurrentChange } from '../store/concurrent-change.js';
import { findEmailTemplate, saveEmailTemplate, updateEmailTemplateAsRead, type EmailTemplateRow } from '../store/email-settings.js';
import { operation } from './operation.js';

const ALL_TEMPLATES = [...SENT_TEMPLATES, ...UNSENT_TEMPLATES];
const TemplateName = Type.Union(ALL_TEMPLATES.map((name) => Type.Literal(name)));
const Params = Type.Object({ templateName: TemplateName });

const fields = {
  body: Type.String({ minLength: 1, maxLength: 100_000 }),
  from: Type.Union([Type.String({ minLength: 1, maxLength: 500, pattern: '^[^\\r\\n\\u0000]*$' }), Type.Null()]),
  subject: Type.Union([Type.String({ minLength: 1, maxLength: 500, pattern: '^[^\\r\\n\\u0000]*$' }), Type.Null()]),
  syntax: Type.Literal('liquid'),
  resultUrl: Type.Union([Type.String({ maxLength: 2048, format: 'uri', pattern: '^https?://' }), Type.Null()]),
  urlLifetimeInSeconds: Type.Union([Type.Integer({ minimum: 60, maximum: 30 * 86_400 }), Type.Null()]),
  includeEmailInRedirect: Type.Boolean(),
  enabled: Type.Boolean(),
};
const optional = Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, Type.Optional(v)])) as { [K in keyof typeof fields]: ReturnType<typeof Type.Optional<(typeof fields)[K]>> };

const CreateBody = Type.Object({ ...optional, template: TemplateName, body: fields.body }, { additionalProperties: false });
const ReplaceBody = Type.Object({ ...optional, template: Type.Optional(TemplateName), body: fields.body }, { additionalProperties: false });
const PatchBody = Type.Object({ ...optional, template: Type.Optional(TemplateName) }, { additionalProperties: false });
type Input = Static<typeof PatchBody>;

const TemplateView = Type.Object({
  template: Type.String(),
  body: Type.String(),
  from: Type.Union([Type.String(), Type.Null()]),
  subject: Type.Union([Type.String(), Type.Null()]),
  syntax: Type.Literal('liquid'),
  resultUrl: Type.Union([Type.String(), Type.Null()]),
  urlLifetimeInSeconds: Type.Union([Type.Integer(), Type.Null()]),
  includeEmailInRedirect: Type.Boolean(),
  enabled: Type.Boolean(),
});

function present(row: EmailTemplateRow): Static<typeof TemplateView> {
  return {
    template: row.template,
    body: row.body,
    from: row.from_address,
    subject: row.subject,
    syntax: 'liquid',
    resultUrl: row.result_url,
    urlLifetimeInSeconds: row.url_lifetime_in_seconds,
    includeEmailInRedirect: row.include_email_in_redirect === 1,
    enabled: row.enabled === 1,
  };
}

class TemplateNotOffered extends NotOffered {
  constructor(name: string) {
    super(`The ${name} email`, `is not offered: this server does not send it (editable: ${SENT_TEMPLATES.join(', ')})`);
  }
}

class TemplateNotFound extends NotFound {
  constructor(name: string) {
    super(`The ${name} template has not been saved; the built-in email is sent`, 'inexistent_email_template');
  }
}

/** Link settings each email has no use for. */
const UNUSED_SETTINGS: Partial<Record<string, readonly (keyof Input)[]>> = {
  blocked_account: ['urlLifetimeInSeconds'],
  mfa_oob_code: ['urlLifetimeInSeconds', 'resultUrl', 'includeEmailInRedirect'],
  // The ticket lasts 5 days whoever sends it, and its page leads nowhere after.
  enrollment_email: ['urlLifetimeInSeconds', 'resultUrl', 'includeEmailInRedirect'],
};

/** The stored row after applying `input` to `base` (undefined: a new template), checked. */
async function merged(tenantId: string, name: string, input: Input, base: EmailTemplateRow | undefined): Promise<EmailTemplateRow> {
  if (input.template !== undefined && input.template !== name) throw new InvalidInput('body', `template: ${input.template} does not match the path (${name})`);
  for (const setting of UNUSED_SETTINGS[name] ?? []) {
    const value = input[setting];
    if (value !== undefined && value !== null && value !== false) throw new InvalidInput('body', `${setting}: the ${name} email has no use for it`);
  }
  for (const [field, source] of [['body', input.body], ['subject', input.subject], ['from', input.from]] as const) {
    if (typeof source !== 'string') continue;
    const problem = await templateProblem(source);
    if (problem) throw new InvalidInput('body', `${field}: ${problem}`);
  }
  const now = Date.now();
  const pick = <T>(value: T | undefined, old: T, fallback: T): T => (value !== undefined ? value : base ? old : fallback);
  return {
    tenant_id: tenantId,
    template: name,
    body: input.body ?? base?.body ?? '',
    from_address: pick(input.from, base?.from_address ?? null, null),
    subject: pick(input.subject, base?.subject ?? null, null),
    result_url: pick(input.resultUrl, base?.result_url ?? null, null),
    url_lifetime_in_seconds: pick(input.urlLifetimeInSeconds, base?.url_lifetime_in_seconds ?? null, null),
    include_email_in_redirect: pick(input.includeEmailInRedirect === undefined ? undefined : input.includeEmailInRedirect ? 1 : 0, base?.include_email_in_redirect ?? 0, 0),
    enabled: pick(input.enabled === undefined ? undefined : input.enabled ? 1 : 0, base?.enabled ?? 1, 1),
    created_at: base?.created_at ?? now,
    updated_at: now,
  };
}

export function registerEmailTemplates(api: App, services: Services): void {
  const db = services.store.db;
  const notOffered = { 501: 'not_offered: an email this server does not send' };

  api.post('/email-templates', {
    ...operation(['create:email_templates'], {
      summary: 'Create an email template',
      body: CreateBody,
      response: { 201: TemplateView, ...errorResponses('management', { 409: 'conflict: the template exists; PATCH or PUT it', ...notOffered }) },
    }),
    handler: async (request, reply) => {
      const name = request.body.template;
      if (!isSentTemplate(name)) throw new TemplateNotOffered(name);
      if (await findEmailTemplate(db, request.tenant.id, name)) throw new Conflict(`The ${name} template exists; update it with PATCH or PUT`);
      const row = await merged(request.tenant.id, name, request.body, undefined);
      await saveEmailTemplate(db, row);
      return reply.code(201).send(present(row));
    },
  });

  api.get('/email-templates/:templateName', {
    ...operation(['read:email_templates'], {
      summary: 'Get an email template',
      params: Params,
      response: { 200: TemplateView, ...errorResponses('management', { 404: 'inexistent_email_template: not saved (or an email not sent here)' }) },
    }),
    handler: async (request) => {
      const row = await findEmailTemplate(db, request.tenant.id, request.params.templateName);
      if (!row) throw new TemplateNotFound(request.params.templateName);
      return present(row);
    },
  });

  api.patch('/email-templates/:templateName', {
    ...operation(['update:email_templates'], {
      summary: 'Update an email template',
      params: Params,
      body: PatchBody,
      response: { 200: TemplateView, ...errorResponses('management', { 404: 'inexistent_email_template: not saved yet', 409: concurrentChangeConflict(), ...notOffered }) },
    }),
    handler: async (request) => {
      const name = request.params.templateName;
      if (!isSentTemplate(name)) throw new TemplateNotOffered(name);
      // Read, merge, conditional write; again when another request changed the template meanwhile, so that a
      // PATCH of the subject and one of the body both land (store/concurrent-change.ts).
      const row = await retryOnConcurrentChange('email template', async () => {
        const base = await findEmailTemplate(db, request.tenant.id, name);
        if (!base) throw new TemplateNotFound(name);
        const row = { ...(await merged(request.tenant.id, name, request.body, base)), updated_at: nextVersion(base.updated_at, Date.now()) };
        if (!(await updateEmailTemplateAsRead(db, row, base.updated_at))) throw new ConcurrentChange();
        return row;
      });
      return present(row);
    },
  });

  api.put('/email-templates/:templateName', {
    ...operation(['update:email_templates'], {
      summary: 'Create or replace an email template',
      params: Params,
      body: ReplaceBody,
      response: { 200: TemplateView, ...errorResponses('management', notOffered) },
    }),
    handler: async (request) => {
      const name = request.params.templateName;
      if (!isSentTemplate(name)) throw new TemplateNotOffered(name);
      const existing = await findEmailTemplate(db, request.tenant.id, name);
      // A replacement: fields not sent take their defaults, not the old values.
      const row = { ...(await merged(request.tenant.id, name, request.body, undefined)), created_at: existing?.created_at ?? Date.now() };
      await saveEmailTemplate(db, row);
      return present(row);
    },
  });
}
