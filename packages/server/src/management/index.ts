/**
 * The Management API v2 under /api/v2: one module per resource, all behind the same authentication and
 * scope check (authenticate.ts), with every operation declaring its scopes (operation.ts).
 * To find an operation: /api/v2/<resource>/… lives in management/<resource>.ts.
 */
import { recordManagementOperation } from '../logs/management-operations.js';
import type { App, Services } from '../services.js';
import { createManagementAuthenticator } from './authenticate.js';
import { registerClientGrants } from './client-grants.js';
import { registerClients } from './clients.js';
import { registerOpenApiDocument } from './openapi.js';
import { registerResourceServers } from './resource-servers.js';
import { registerConnections } from './connections.js';
import { registerUserBlocks } from './user-blocks.js';
import { registerGuardian } from './guardian.js';
import { registerGuardianEnrollmentTickets } from './guardian-enrollment-tickets.js';
import { registerUserAuthenticationMethods } from './user-authentication-methods.js';
import { registerUsers } from './users.js';
import { registerRoles } from './roles.js';
import { registerUserOrganizations } from './user-organizations.js';
import { registerUserRoles } from './user-roles.js';
import { registerUserSessions } from './user-sessions.js';
import { registerOrganizations } from './organizations.js';
import { registerOrganizationMembers } from './organization-members.js';
import { registerOrganizationConnections } from './organization-connections.js';
import { registerOrganizationGroups } from './organization-groups.js';
import { registerOrganizationClientGrants } from './organization-client-grants.js';
import { registerGroups } from './groups.js';
import { registerEventStreams } from './event-streams.js';
import { registerEventStreamDeliveries } from './event-streams-deliveries.js';
import { registerEventStreamTest } from './event-streams-test.js';
import { registerTenantSettings } from './tenant-settings.js';
import { registerRateLimitPolicies } from './rate-limit-policies.js';
import { registerAttackProtection } from './attack-protection.js';
import { registerJobs } from './jobs.js';
import { registerLogs } from './logs.js';
import { registerLogStreams } from './log-streams.js';
import { registerStats } from './stats.js';
import { registerJobsUsersExports } from './jobs-users-exports.js';
import { registerJobsUsersImports } from './jobs-users-imports.js';
import { registerJobsVerificationEmail } from './jobs-verification-email.js';
import { registerCustomDomains } from './custom-domains.js';
import { registerEmailProvider } from './email-provider.js';
import { registerEmailTemplates } from './email-templates.js';
import { registerNotOffered } from './not-offered.js';
import { registerBranding } from './branding.js';
import { registerPrompts } from './prompts.js';
import { registerBotDetection } from './bot-detection.js';

export async function registerManagementApi(app: App, services: Services): Promise<void> {
  registerOpenApiDocument(app);
  await app.register(
    async (api) => {
      // Browsers call the API too (svc.Management with a user's current_user token): CORS for the origins
      // the tenant's applications allow, declared on every route of this plugin as it is added.
      api.addHook('onRoute', (route) => {
        route.config = {
          ...route.config,
          cors: { kind: 'origins', credentials: false, isAllowed: (request, origin) => services.clientOrigins.allows(request.tenant.id, origin) },
        } as typeof route.config;
      });
      api.addHook('onRequest', createManagementAuthenticator(services));
      // A successful write (committed by now) may change what every node caches about the tenant: drop this
      // node's copies and tell the others before the response goes out, so that no request the caller makes
      // after hearing of its change, on any node, is served from a copy older than it.
      api.addHook('onSend', async (request, reply) => {
        if (request.method !== 'GET' && reply.statusCode < 400 && request.tenant) {
          try {
            await services.changes.publish(request.tenant.id);
          } catch (err) {
            // The change is committed; other nodes catch up when their copies expire (a few seconds).
            request.log.warn({ err }, 'could not tell the other nodes about a tenant change');
          }
        }
      });
      // Tenant logs: sapi / fapi / api_limit, once the response is out (logs/management-operations.ts).
      api.addHook('onResponse', async (request, reply) => recordManagementOperation(services, request, reply));
      registerResourceServers(api as App, services);
      registerConnections(api as App, services);
      registerUsers(api as App, services);
      registerUserBlocks(api as App, services);
      registerUserAuthenticationMethods(api as App, services);
      registerGuardian(api as App, services);
      registerGuardianEnrollmentTickets(api as App, services);
      registerClients(api as App, services);
      registerClientGrants(api as App, services);
      registerRoles(api as App, services);
      registerUserRoles(api as App, services);
      registerUserSessions(api as App, services);
      registerUserOrganizations(api as App, services);
      registerOrganizations(api as App, services);
      registerOrganizationMembers(api as App, services);
      registerOrganizationConnections(api as App, services);
      registerOrganizationGroups(api as App, services);
      registerOrganizationClientGrants(api as App, services);
      registerGroups(api as App, services);
      registerEventStreams(api as App, services);
      registerEventStreamDeliveries(api as App, services);
      registerEventStreamTest(api as App, services);
      registerTenantSettings(api as App, services);
      registerRateLimitPolicies(api as App, services);
      registerAttackProtection(api as App, services);
      registerLogs(api as App, services);
      registerLogStreams(api as App, services);
      registerStats(api as App, services);
      registerJobs(api as App, services);
      registerJobsUsersImports(api as App, services);
      registerJobsUsersExports(api as App, services);
      registerJobsVerificationEmail(api as App, services);
      registerCustomDomains(api as App, services);
      registerEmailProvider(api as App, services);
      registerEmailTemplates(api as App, services);
      registerNotOffered(api as App);
      registerBranding(api as App, services);
      registerPrompts(api as App, services);
      registerBotDetection(api as App);
    },
    { prefix: '/api/v2' },
  );
}
