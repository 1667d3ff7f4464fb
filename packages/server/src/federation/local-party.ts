/** This side of a trip upstream (strategy.ts LocalParty), for the tenant the request came to. */
import type { FastifyRequest } from 'fastify';
import { signingCertificate } from '../crypto/x509-certificates.js';
import type { Services } from '../services.js';
import type { Connection } from '../store/connections.js';
import { purgeExpiredAssertionIds, useAssertionId } from '../store/saml-assertion-ids.js';
import type { LocalParty } from './strategy.js';

let usedSincePurge = 0;

export function localParty(request: FastifyRequest, services: Services, connection: Connection): LocalParty {
  const tenant = request.tenant;
  return {
    tenantName: tenant.name,
    baseUrl: tenant.baseUrl,
    async signingKey() {
      const key = await services.keyRing.signingKey(tenant.id);
      // The same certificate the tenant publishes as a SAML identity provider (subject: its host).
      const certificatePem = await signingCertificate(key, new URL(tenant.baseUrl).host);
      return { privateKeyPem: key.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), certificatePem };
    },
    async useAssertionId(assertionId, expiresAt) {
      const db = services.store.db;
      if (++usedSincePurge >= 200) {
        usedSincePurge = 0;
        await purgeExpiredAssertionIds(db);
      }
      return useAssertionId(db, { tenant_id: tenant.id, connection_id: connection.id, assertion_id: assertionId, expires_at: expiresAt });
    },
  };
}
