/**
 * /api/v2/emails/provider (the reference's Emails): the tenant's own email provider. GET, POST (201, 409 when
 * one exists), PATCH, DELETE (204). While enabled, the tenant's emails go through it instead of
 * GATEHOUSE_SMTP_URL (messaging/mailer.ts).
 *
 * Where the reference is silent, or where this server differs:
 *  - only `smtp` is offered: the other providers' names are a 400 that says so (their HTTP APIs are not
 *    implemented here, and SMTP reaches all of them);
 *  - credentials (`smtp_host`, `smtp_port`, `smtp_user`, `smtp_pass`) are sealed at rest; `smtp_pass` is
 *    write-only, the rest is shown; a PATCH with `credentials` replaces them, keeping `smtp_pass` when it is
 *    not sent and host and user are unchanged;
 *  - `settings` is not offered for SMTP (the reference's are headers of HTTP providers); sending it is a 400.
 */
import { Type } from '@fastify/type-provider-typebox';
import { Conflict, InvalidInput, NotFound } from '../http/errors.js';
import { errorResponses, noContent } from '../http/responses.js';
import { openCredentials, sealCredentials, type SmtpCredentials } from '../messaging/email-provider.js';
import type { App, Services } from '../services.js';
import { ConcurrentChange, concurrentChangeConflict, nextVersion, retryOnConcurrentChange } from '../store/concurrent-change.js';
import { deleteEmailProvider, findEmailProvider, insertEmailProvider, updateEmailProviderAsRead, type EmailProviderRow } from '../store/email-settings.js';
import { operation } from './operation.js';

const OTHER_PROVIDERS = ['mailgun', 'mandrill', 'sendgrid', 'ses', 'sparkpost', 'azure_cs', 'ms365', 'custom'];
const NO_CONTROL = '^[^\\u0000-\\u001f\\u007f]*$';

const Credentials = Type.Object(
  {
    smtp_host: Type.String({ minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9.:\\[\\]-]+$' }),
    smtp_port: Type.Integer({ minimum: 1, maximum: 65535 }),
    smtp_user: Type.Optional(Type.String({ minLength: 1, maxLength: 320, pattern: NO_CONTROL })),
    smtp_pass: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, pattern: NO_CONTROL })),
  },
  { additionalProperties: false },
);
const Name = Type.String({ minLength: 1, maxLength: 32 });
const FromAddress = Type.String({ minLength: 3, maxLength: 320, pattern: NO_CONTROL });

const CreateBody = Type.Object(
  {
    name: Name,
    enabled: Type.Optional(Type.Boolean()),
    default_from_address: Type.Optional(FromAddress),
    credentials: Credentials,
    settings: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { additionalProperties: false },
);
const UpdateBody = Type.Object(
  {
    name: Type.Optional(Name),
    enabled: Type.Optional(Type.Boolean()),
    default_from_address: Type.Optional(Type.Union([FromAddress, Type.Null()])),
    credentials: Type.Optional(Credentials),
    settings: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { additionalProperties: false },
);

const ProviderView = Type.Object({
  name: Type.Literal('smtp'),
  enabled: Type.Boolean(),
  default_from_address: Type.Optional(Type.String()),
  credentials: Type.Object({ smtp_host: Type.String(), smtp_port: Type.Integer(), smtp_user: Type.Optional(Type.String()) }, { description: 'smtp_pass is write-only' }),
  settings: Type.Object({}),
});

function present(services: Services, row: EmailProviderRow) {
  const { smtp_host, smtp_port, smtp_user } = openCredentials(services.sealer, row);
  return {
    name: 'smtp' as const,
    enabled: row.enabled === 1,
    ...(row.default_from_address !== null && { default_from_address: row.default_from_address }),
    credentials: { smtp_host, smtp_port, ...(smtp_user !== undefined && { smtp_user }) },
    settings: {},
  };
}

function checkOffered(body: { name?: string; settings?: object }): void {
  if (body.name !== undefined && body.name !== 'smtp') {
    const known = OTHER_PROVIDERS.includes(body.name);
    throw new InvalidInput('body', known ? `name: the ${body.name} provider is not offered; use smtp (which it also accepts)` : 'name: must be smtp');
  }
  if (body.settings !== undefined && Object.keys(body.settings).length > 0) throw new InvalidInput('body', 'settings: not offered for the smtp provider');
}

class ProviderNotFound extends NotFound {
  constructor() {
    super('There is no email provider configured for this tenant', 'inexistent_email_provider');
  }
}

export function registerEmailProvider(api: App, services: Services): void {
  const db = services.store.db;
  const notFound = { 404: 'inexistent_email_provider: none configured' };

  api.get('/emails/provider', {
    ...operation(['read:email_provider'], { summary: 'Get the email provider', response: { 200: ProviderView, ...errorResponses('management', notFound) } }),
    handler: async (request) => {
      const row = await findEmailProvider(db, request.tenant.id);
      if (!row) throw new ProviderNotFound();
      return present(services, row);
    },
  });

  api.post('/emails/provider', {
    ...operation(['create:email_provider'], {
      summary: 'Configure the email provider (SMTP)',
      body: CreateBody,
      response: { 201: ProviderView, ...errorResponses('management', { 409: 'conflict: a provider is configured; PATCH it' }) },
    }),
    handler: async (request, reply) => {
      const { tenant, body } = request;
      checkOffered(body);
      if (await findEmailProvider(db, tenant.id)) throw new Conflict('An email provider is already configured; update it with PATCH');
      const now = Date.now();
      const row: EmailProviderRow = {
        tenant_id: tenant.id,
        name: 'smtp',
        enabled: body.enabled === false ? 0 : 1,
        default_from_address: body.default_from_address ?? null,
        settings: '{}',
        credentials_sealed: sealCredentials(services.sealer, tenant.id, body.credentials),
        created_at: now,
        updated_at: now,
      };
      await insertEmailProvider(db, row);
      services.mailer.providerChanged?.(tenant.id);
      return reply.code(201).send(present(services, row));
    },
  });

  api.patch('/emails/provider', {
    ...operation(['update:email_provider'], {
      summary: 'Update the email provider',
      body: UpdateBody,
      response: { 200: ProviderView, ...errorResponses('management', { ...notFound, 409: concurrentChangeConflict() }) },
    }),
    handler: async (request) => {
      const { tenant, body } = request;
      checkOffered(body);
      // Read, change, conditional write; again when another request changed the provider meanwhile, so that two
      // PATCHes of different fields both land (store/concurrent-change.ts).
      const updated = await retryOnConcurrentChange('email provider', async () => {
        const row = await findEmailProvider(db, tenant.id);
        if (!row) throw new ProviderNotFound();
        let credentialsSealed = row.credentials_sealed;
        if (body.credentials) {
          const old = openCredentials(services.sealer, row);
          const next: SmtpCredentials = { ...body.credentials };
          // The password is write-only: kept when not sent, as long as it is still meant for the same account.
          if (next.smtp_pass === undefined && old.smtp_pass !== undefined && next.smtp_host === old.smtp_host && next.smtp_user === old.smtp_user) next.smtp_pass = old.smtp_pass;
          credentialsSealed = sealCredentials(services.sealer, tenant.id, next);
        }
        const updated: EmailProviderRow = {
          ...row,
          ...(body.enabled !== undefined && { enabled: body.enabled ? 1 : 0 }),
          ...(body.default_from_address !== undefined && { default_from_address: body.default_from_address }),
          credentials_sealed: credentialsSealed,
          updated_at: nextVersion(row.updated_at, Date.now()),
        };
        if (!(await updateEmailProviderAsRead(db, updated, row.updated_at))) throw new ConcurrentChange();
        return updated;
      });
      services.mailer.providerChanged?.(tenant.id);
      return present(services, updated);
    },
  });

  api.delete('/emails/provider', {
    ...operation(['delete:email_provider'], {
      summary: 'Remove the email provider: the tenant’s emails go through the server’s SMTP again',
      response: { 204: noContent('Removed'), ...errorResponses('management', notFound) },
    }),
    handler: async (request, reply) => {
      if (!(await deleteEmailProvider(db, request.tenant.id))) throw new ProviderNotFound();
      services.mailer.providerChanged?.(request.tenant.id);
      return reply.code(204).send();
    },
  });
}
