/**
 * A tenant's own email provider: SMTP settings that override GATEHOUSE_SMTP_URL for that tenant's emails while
 * enabled. The credentials (host, port, user, password) are sealed at rest as one value and never shown again
 * but for host, port and user; the password is write-only.
 */
import type { Sealer } from '../crypto/sealing.js';
import type { EmailProviderRow } from '../store/email-settings.js';

export interface SmtpCredentials {
  smtp_host: string;
  smtp_port: number;
  smtp_user?: string;
  smtp_pass?: string;
}

export function credentialsContext(tenantId: string): string {
  return `email-provider:${tenantId}`;
}

export function sealCredentials(sealer: Sealer, tenantId: string, credentials: SmtpCredentials): string {
  return sealer.seal(JSON.stringify(credentials), credentialsContext(tenantId));
}

export function openCredentials(sealer: Sealer, row: Pick<EmailProviderRow, 'tenant_id' | 'credentials_sealed'>): SmtpCredentials {
  return JSON.parse(sealer.unseal(row.credentials_sealed, credentialsContext(row.tenant_id))) as SmtpCredentials;
}

/** nodemailer's SMTP options: TLS from the start on 465 (smtps), STARTTLS when offered elsewhere, as GATEHOUSE_SMTP_URL. */
export function smtpOptions(credentials: SmtpCredentials): { host: string; port: number; secure: boolean; auth?: { user: string; pass: string } } {
  return {
    host: credentials.smtp_host,
    port: credentials.smtp_port,
    secure: credentials.smtp_port === 465,
    ...(credentials.smtp_user !== undefined && { auth: { user: credentials.smtp_user, pass: credentials.smtp_pass ?? '' } }),
  };
}
