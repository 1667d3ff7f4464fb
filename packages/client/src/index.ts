/**
 * svc: the Gatehouse browser library, version 10 (the contract's client library; wire-compatible with
 * auth0-js v10). Zero runtime dependencies: fetch, WebCrypto, postMessage and the URL class.
 *
 * @packageDocumentation
 */
export { VERSION } from './version.js';
export { WebAuth, type WebAuthOptions, type AuthorizeOptions, type AuthResult } from './web-auth/web-auth.js';
export { Management, type ManagementOptions } from './management/management.js';
export type { SvcError, Callback } from './helpers/errors.js';
export type { IdTokenPayload } from './helpers/id-token.js';
