/**
 * The part of oidc-provider's API that peers/oidc-provider.js uses. oidc-provider ships no types, and
 * @types/oidc-provider lags behind its major versions; the bench only needs the constructor and `callback`.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export default class Provider {
    constructor(issuer: string, configuration?: Record<string, unknown>);
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
  }
}
