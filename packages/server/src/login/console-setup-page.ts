/**
 * GET/POST /u/console-setup?ticket=…: a console setup link (#15). A usable link (unspent, unexpired, of this
 * tenant) shows the form; the POST creates the person's account in the database connection (its password
 * policy applies), gives it the console admin role, spends the link, starts their session and sends them to
 * /console/, which then signs in through /authorize without asking again. Problems come back to the form
 * (post/redirect/get, form-outcome.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CONSOLE_ADMIN_ROLE_NAME, CONSOLE_PATH } from '../console/bootstrap.js';
import { CONSOLE_SETUP_PATH, findUsableSetupLink, releaseSetupLink, spendSetupLink, type SetupLink } from '../console/setup-links.js';
import { databaseOptions, signUpWithPassword } from '../connections/database-users.js';
import { MAX_PASSWORD_LENGTH, passwordChecklist } from '../connections/password-policy.js';
import { eventContextFrom } from '../events/context.js';
import { documentedOnly, FORM, frontChannelParameters } from '../http/openapi.js';
import { htmlPage, redirect } from '../http/responses.js';
import type { App, Services } from '../services.js';
import { findConnectionByName, type Connection } from '../store/connections.js';
import { assignRoles, findRoleByName } from '../store/roles.js';
import { DATABASE_CONNECTION_NAME } from '../tenancy/bootstrap.js';
import { INVALID_LINK, PAGE_TAGS, TICKET_QUERY } from './documentation.js';
import { formOutcome, redirectWithOutcome, type FormOutcome } from './form-outcome.js';
import { sendHostedPage } from './hosted-page.js';
import { renderConsoleSetupPage } from './pages/console-setup.js';
import { renderMessagePage } from './pages/message.js';
import { passwordAdvice } from './pages/password-rules.js';
import { sha256, startSession } from './session.js';
import { formBody } from './step.js';

const place = (ticket: string) => ({ page: 'console-setup', binding: sha256(ticket), url: `${CONSOLE_SETUP_PATH}?ticket=${encodeURIComponent(ticket)}` });

function sendInvalidLink(reply: FastifyReply, request: FastifyRequest): FastifyReply {
  return sendHostedPage(
    reply,
    request.tenant,
    (context) =>
      renderMessagePage(context, {
        title: 'This setup link can no longer be used',
        tone: 'problem',
        message: 'Console setup links work once and expire after 24 hours. Restart the server for a new first-admin link (while there is no admin), or ask an admin for an invitation (gatehouse admin invite EMAIL).',
      }),
    { status: 400 },
  );
}

async function adminConnection(services: Services, tenantId: string): Promise<Connection | undefined> {
  const connection = await findConnectionByName(services.store.db, tenantId, DATABASE_CONNECTION_NAME);
  return connection?.strategy === 'auth0' ? connection : undefined;
}

function showForm(reply: FastifyReply, request: FastifyRequest, link: SetupLink, connection: Connection, ticket: string, outcome?: FormOutcome): FastifyReply {
  return sendHostedPage(
    reply,
    request.tenant,
    (context) =>
      renderConsoleSetupPage(context, {
        action: CONSOLE_SETUP_PATH,
        ticket,
        invitedEmail: link.email,
        ...(outcome?.values?.email !== undefined && { email: outcome.values.email }),
        passwordRules: outcome?.passwordRules ? { rules: outcome.passwordRules, checked: true } : { rules: passwordChecklist(databaseOptions(connection)), checked: false },
        ...(outcome?.error !== undefined && { error: outcome.error }),
      }),
    { status: outcome?.status ?? 200 },
  );
}

export function registerConsoleSetupPage(app: App, services: Services): void {
  app.get(CONSOLE_SETUP_PATH, {
    config: { rateLimit: { bucket: 'authorize' } },
    schema: {
      tags: PAGE_TAGS,
      summary: 'A console setup link (first admin or invitation): the form for the admin account',
      ...TICKET_QUERY,
      response: {
        200: htmlPage('The form'),
        400: htmlPage("The form again after the POST, saying what to fix; or the link's error page"),
      },
    },
  }, async (request, reply) => {
    const ticket = (request.query as Record<string, unknown>).ticket;
    if (typeof ticket !== 'string') return sendInvalidLink(reply, request);
    const link = await findUsableSetupLink(services.store.db, request.tenant.id, ticket);
    const connection = await adminConnection(services, request.tenant.id);
    if (!link || !connection) return sendInvalidLink(reply, request);
    return showForm(reply, request, link, connection, ticket, formOutcome(request, services, place(ticket)));
  });

  app.post(CONSOLE_SETUP_PATH, {
    config: { rateLimit: { bucket: 'login' } },
    schema: {
      tags: PAGE_TAGS,
      summary: 'Create the admin account and open the console',
      ...documentedOnly({
        body: frontChannelParameters(
          { ticket: 'From the link', email: 'The admin’s address (not for an invitation, which names it)', password: 'The password', password_confirmation: 'The same again' },
          ['ticket', 'password', 'password_confirmation'],
        ),
        consumes: [FORM],
      }),
      response: {
        303: redirect('To /console/ once the account is made; otherwise back to the form, which shows what to fix'),
        400: INVALID_LINK,
      },
    },
  }, async (request, reply) => {
    const body = formBody(request);
    const ticket = body.ticket ?? '';
    const db = services.store.db;
    const tenantId = request.tenant.id;
    const link = await findUsableSetupLink(db, tenantId, ticket);
    const connection = await adminConnection(services, tenantId);
    const role = await findRoleByName(db, tenantId, CONSOLE_ADMIN_ROLE_NAME);
    if (!link || !connection || !role) return sendInvalidLink(reply, request);
    const email = link.email ?? (body.email ?? '').trim();
    const retry = (outcome: Omit<FormOutcome, 'status'>) =>
      redirectWithOutcome(reply, request, services, place(ticket), { status: 400, ...outcome, ...(!link.email && { values: { email: email.slice(0, 320) } }) });
    const password = body.password ?? '';
    if (password.length > 4 * MAX_PASSWORD_LENGTH) return retry({ error: `That password is too long. Choose one of at most ${MAX_PASSWORD_LENGTH} characters.` });
    if (password !== (body.password_confirmation ?? '')) return retry({ error: 'The two passwords do not match. Type the same password in both fields.' });

    // Two tabs, one link: the link is spent before the account is made, so only one account is made from it; a
    // form the connection refuses gives the link back for the corrected form.
    const spentAt = Date.now();
    if (!(await spendSetupLink(db, link, spentAt))) return sendInvalidLink(reply, request);
    let result: Awaited<ReturnType<typeof signUpWithPassword>>;
    try {
      result = await signUpWithPassword(services, request.tenant, connection, { email, password }, eventContextFrom(request));
    } catch (error) {
      await releaseSetupLink(db, link, spentAt);
      throw error;
    }
    if (result.outcome !== 'ok') await releaseSetupLink(db, link, spentAt);
    switch (result.outcome) {
      case 'invalid':
        return retry({ error: result.message });
      case 'exists':
        return retry({ error: 'An account with this address exists already. Use another address, or give that account the “Gatehouse Console Admin” role through the Management API.' });
      case 'password_rejected':
        return retry({ error: passwordAdvice(result.check), passwordRules: passwordChecklist(databaseOptions(connection), password, { email }) });
      case 'password_leaked':
        return retry({ error: 'This password has appeared in a data breach elsewhere. Choose a different one.' });
      case 'disabled':
        return retry({ error: `Sign-ups are disabled on the ${connection.name} connection, so no account can be made here. Enable them, then use the link again.` });
    }
    await assignRoles(db, tenantId, [{ user_id: result.user.user_id, role_id: role.id }]);
    await startSession(request, reply, services, result.user, Date.now(), ['pwd']);
    return reply.redirect(`${CONSOLE_PATH}/`, 303);
  });
}
