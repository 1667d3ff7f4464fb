/**
 * POST /api/v2/jobs/verification-email (scope update:users): sends the user (or, with `identity`, one of its
 * linked identities) an email whose link verifies the address. The email is queued with a completed job in one
 * transaction; the answer is that job (201), which GET /api/v2/jobs/{id} shows afterwards.
 * `client_id` names the application the link returns to; `organization_id` must name an organization of the
 * tenant (its branding is not applied to the email yet).
 */
import { Type } from '@fastify/type-provider-typebox';
import { InvalidInput } from '../http/errors.js';
import { queueVerificationEmail } from '../messaging/account-emails.js';
import type { App, Services } from '../services.js';
import { findClient } from '../store/clients.js';
import { findConnectionById } from '../store/connections.js';
import { findJobById, insertJob, newJobId } from '../store/jobs.js';
import { findOrganization } from '../store/organizations.js';
import { findPrimaryUser, findUser } from '../store/users.js';
import { JobBody, presentJob } from './jobs.js';
import { operation } from './operation.js';
import { UserNotFound } from './users.js';

const VerificationEmailBody = Type.Object(
  {
    user_id: Type.String({ minLength: 3, maxLength: 321, pattern: '^[A-Za-z0-9_.-]{1,64}\\|\\S{1,255}$' }),
    client_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    identity: Type.Optional(
      Type.Object(
        { user_id: Type.String({ minLength: 1, maxLength: 255 }), provider: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.-]+$' }) },
        { additionalProperties: false },
      ),
    ),
    organization_id: Type.Optional(Type.String({ pattern: '^org_[A-Za-z0-9]{16}$' })),
  },
  { additionalProperties: false },
);

export function registerJobsVerificationEmail(api: App, services: Services): void {
  const db = services.store.db;
  api.post('/jobs/verification-email', {
    ...operation(['update:users'], { summary: 'Send a user an email that verifies their address', body: VerificationEmailBody, response: { 201: JobBody } }),
    handler: async (request, reply) => {
      const { body, tenant } = request;
      const primary = await findPrimaryUser(db, tenant.id, body.user_id);
      if (!primary) throw new UserNotFound();
      let user = primary;
      if (body.identity) {
        const secondary = await findUser(db, tenant.id, `${body.identity.provider}|${body.identity.user_id}`);
        if (!secondary || secondary.linked_to !== primary.user_id) throw new InvalidInput('body', 'The user exists, but does not contain the given identity.');
        user = secondary;
      }
      const connection = await findConnectionById(db, tenant.id, user.connection_id);
      if (!connection || connection.strategy !== 'auth0') throw new InvalidInput('body', 'Connection must be a database connection.');
      if (!user.email) throw new InvalidInput('body', 'User does not have an email address.');
      if (user.email_verified) throw new InvalidInput('body', "The user's email address is already verified.");
      if (body.client_id && !(await findClient(db, tenant.id, body.client_id))) throw new InvalidInput('body', 'The client does not exist.');
      if (body.organization_id && !(await findOrganization(db, tenant.id, body.organization_id))) throw new InvalidInput('body', 'The organization does not exist');
      const id = newJobId();
      await db.transaction().execute(async (trx) => {
        const now = Date.now();
        await insertJob(trx, { id, tenant_id: tenant.id, type: 'verification_email', status: 'completed', options: '{}', created_at: now, completed_at: now });
        // A disabled verify_email template: the job completes and sends nothing, as the tenant chose.
        if ((await queueVerificationEmail(trx, services, tenant, user, body.client_id)) === 'undeliverable') throw new InvalidInput('body', 'The email address of this user cannot receive email.');
      });
      return reply.code(201).send(await presentJob(services, tenant, (await findJobById(db, id))!));
    },
  });
}
