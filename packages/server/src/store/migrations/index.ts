/**
 * Every migration, in order. Listed statically (not read from a folder) so they ship inside the build
 * and run the same from source and from dist. Never edit a migration that has shipped; add the next one.
 */
import type { Migration, MigrationProvider } from 'kysely';
import * as foundation from './0001_foundation.js';
import * as machineAccessAndUsers from './0002_machine_access_and_users.js';
import * as clients from './0003_clients.js';
import * as signIn from './0004_sign_in.js';
import * as userTokens from './0005_user_tokens.js';
import * as eventStreams from './0006_event_streams.js';
import * as organizationsAndGroups from './0007_organizations_and_groups.js';
import * as messaging from './0008_messaging.js';
import * as crossOrigin from './0009_cross_origin.js';
import * as passwordless from './0010_passwordless.js';
import * as normalisedEmails from './0011_normalised_emails.js';
import * as userJobs from './0016_user_jobs.js';
import * as organizationClientGrants from './0017_organization_client_grants.js';
import * as domainsAndEmails from './0018_domains_and_emails.js';
import * as usersAtScale from './0019_users_at_scale.js';
import * as tenantLogs from './0021_tenant_logs.js';
import * as fapi from './0022_fapi.js';
import * as multiFactor from './0023_multi_factor.js';
import * as webauthn from './0024_webauthn.js';
import * as federation from './0025_federation.js';
import * as logStreams from './0026_log_streams.js';
import * as consoleSetupLinks from './0027_console_setup_links.js';
import * as rememberedBrowsers from './0029_remembered_browsers.js';
import * as samlAssertionIds from './0030_saml_assertion_ids.js';
import * as samlSessions from './0031_saml_sessions.js';
import * as backchannelLogout from './0032_backchannel_logout.js';
import * as logRollups from './0033_log_rollups.js';
import * as samlUpstreamLogout from './0034_saml_upstream_logout.js';
import * as mfaEnrollmentTickets from './0035_mfa_enrollment_tickets.js';
import * as onePendingEnrollment from './0040_one_pending_enrollment.js';
import * as usedProofIds from './0042_used_proof_ids.js';
import * as cliJobReports from './0043_cli_job_reports.js';

const migrations: Record<string, Migration> = {
  '0001_foundation': foundation,
  '0002_machine_access_and_users': machineAccessAndUsers,
  '0003_clients': clients,
  '0004_sign_in': signIn,
  '0005_user_tokens': userTokens,
  '0006_event_streams': eventStreams,
  '0007_organizations_and_groups': organizationsAndGroups,
  '0008_messaging': messaging,
  '0009_cross_origin': crossOrigin,
  '0010_passwordless': passwordless,
  '0011_normalised_emails': normalisedEmails,
  '0016_user_jobs': userJobs,
  '0017_organization_client_grants': organizationClientGrants,
  '0018_domains_and_emails': domainsAndEmails,
  '0019_users_at_scale': usersAtScale,
  '0021_tenant_logs': tenantLogs,
  '0022_fapi': fapi,
  '0023_multi_factor': multiFactor,
  '0024_webauthn': webauthn,
  '0025_federation': federation,
  '0026_log_streams': logStreams,
  '0027_console_setup_links': consoleSetupLinks,
  '0029_remembered_browsers': rememberedBrowsers,
  '0030_saml_assertion_ids': samlAssertionIds,
  '0031_saml_sessions': samlSessions,
  '0032_backchannel_logout': backchannelLogout,
  '0033_log_rollups': logRollups,
  '0034_saml_upstream_logout': samlUpstreamLogout,
  '0035_mfa_enrollment_tickets': mfaEnrollmentTickets,
  '0040_one_pending_enrollment': onePendingEnrollment,
  '0042_used_proof_ids': usedProofIds,
  '0043_cli_job_reports': cliJobReports,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: () => Promise.resolve(migrations),
};
