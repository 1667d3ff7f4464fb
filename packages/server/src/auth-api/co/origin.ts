/** The page origin of a cross-origin login must be one of the client's Allowed Origins or Allowed Web Origins. */
import type { Client } from '../../store/clients.js';

export function clientAllowsOrigin(client: Client, origin: string): boolean {
  return [...client.allowed_origins, ...client.web_origins].some((allowed) => allowed.replace(/\/$/, '') === origin);
}
