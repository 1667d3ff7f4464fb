/**
 * The hand-written grammars for the surfaces that are not JSON described by the OpenAPI documents. Each is a
 * fast-check arbitrary of the surface's text; a family in ../families/ sends it and checks the invariants.
 *
 * Not yet here, because the surfaces do not exist yet: SAML (AuthnRequest, Response and LogoutRequest XML,
 * deflated and base64 in a query, or base64 in a form; with DTDs, entities, XSW wrapping and comment
 * injection among the cases) arrives with federation/, and request objects (JAR, `request=` and
 * `request_uri=` at /authorize and PAR) with auth-api/. Add `saml.ts` and `request-object.ts` beside these,
 * export them here, and give each a family.
 */
export { cookieHeader } from './cookie.js';
export { field, formText } from './form.js';
export { jwtGrammar, makeJwtMaterial, type JwtMaterial } from './jwt.js';
export { hostileText } from './text.js';
