/**
 * Our SAML metadata for one application (SAML Metadata §2.4.3): the entity ID it knows us by, a signing
 * KeyDescriptor per published key (current first, then next, so a service provider that reads metadata trusts
 * the next key before a rotation makes it sign), the single sign-on and logout endpoints in both bindings.
 */
import { certificateBody, signingCertificate } from '../../crypto/x509-certificates.js';
import { xmlEscape } from '../../federation/saml-safety.js';
import type { Services } from '../../services.js';
import type { Client } from '../../store/clients.js';
import type { Tenant } from '../../store/tenants.js';
import { BINDINGS, NAME_ID_FORMATS, type SamlSettings } from './addon.js';
import { certificateSubject, idpEntityId } from './complete.js';

export async function renderIdpMetadata(services: Services, tenant: Tenant, client: Client, settings: SamlSettings): Promise<string> {
  const published = (await services.keyRing.publishedKeys(tenant.id)).filter((k) => k.status === 'current' || k.status === 'next');
  const certificates = await Promise.all(published.map((k) => signingCertificate(k.key, certificateSubject(tenant))));
  const base = `${tenant.baseUrl}/samlp/${encodeURIComponent(client.client_id)}`;
  const keys = certificates
    .map(
      (pem) =>
        `<md:KeyDescriptor use="signing"><ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:X509Data><ds:X509Certificate>${certificateBody(pem)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`,
    )
    .join('\n    ');
  const services_ = (element: string, location: string) =>
    [BINDINGS.redirect, BINDINGS.post].map((binding) => `<md:${element} Binding="${binding}" Location="${xmlEscape(location)}"/>`).join('\n    ');
  return `<?xml version="1.0" encoding="UTF-8"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="${xmlEscape(idpEntityId(tenant, settings))}">
  <md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol" WantAuthnRequestsSigned="${settings.signingCert ? 'true' : 'false'}">
    ${keys}
    ${services_('SingleLogoutService', `${base}/logout`)}
    ${NAME_ID_FORMATS.map((f) => `<md:NameIDFormat>${f}</md:NameIDFormat>`).join('\n    ')}
    ${services_('SingleSignOnService', base)}
  </md:IDPSSODescriptor>
</md:EntityDescriptor>
`;
}
