/**
 * `svc.Management`: the current user's own profile through the Management API v2 with a user token that
 * carries library rule 7's current-user scopes (getUser, patchUserMetadata, linkUser). Responses are returned
 * as the server sent them.
 */
import type { Callback } from '../helpers/errors.js';
import { request, withCallback } from '../helpers/http.js';
import { normalizeDomain, requireOptions, requireString } from '../helpers/options.js';

export interface ManagementOptions {
  /** The server, in the same forms as WebAuth's `domain`. */
  domain: string;
  /** An access token for the Management API (audience `<base url>/api/v2/`). */
  token: string;
}

export class Management {
  readonly baseOptions: Readonly<ManagementOptions>;
  readonly baseUrl: string;

  constructor(options: ManagementOptions) {
    const opts = requireOptions(options);
    this.baseUrl = normalizeDomain(opts.domain);
    requireString(opts.token, 'token');
    this.baseOptions = Object.freeze({ ...opts });
  }

  private url(userId: string, suffix = ''): string {
    return `${this.baseUrl}/api/v2/users/${encodeURIComponent(requireString(userId, 'userId'))}${suffix}`;
  }

  getUser(userId: string, callback: Callback<Record<string, unknown>>): Promise<Record<string, unknown>> {
    return withCallback(request(this.url(userId), { method: 'GET', token: this.baseOptions.token }), callback);
  }

  /** Values overwrite existing keys and add new ones. */
  patchUserMetadata(userId: string, userMetadata: Record<string, unknown>, callback: Callback<Record<string, unknown>>): Promise<Record<string, unknown>> {
    return withCallback(request(this.url(userId), { method: 'PATCH', token: this.baseOptions.token, body: { user_metadata: userMetadata } }), callback);
  }

  /** Links the account whose ID token is `secondaryUserToken` to `userId` (library rule 8). */
  linkUser(userId: string, secondaryUserToken: string, callback: Callback<unknown[]>): Promise<unknown[]> {
    requireString(secondaryUserToken, 'secondaryUserToken');
    return withCallback(request(this.url(userId, '/identities'), { method: 'POST', token: this.baseOptions.token, body: { link_with: secondaryUserToken } }), callback);
  }
}
