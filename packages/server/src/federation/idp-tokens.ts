/**
 * The upstream's access and refresh tokens in a user's identities (`identities[].access_token`,
 * `refresh_token`), as the reference returns them: only to a Management API token holding
 * `read:user_idp_tokens`, never in lists, events or logs.
 */
import type { Services } from '../services.js';
import type { UserView } from '../management/user-view.js';
import { upstreamTokens } from './federated-users.js';

export async function withUpstreamTokens(services: Services, view: UserView): Promise<UserView> {
  const identities = await Promise.all(
    view.identities.map(async (identity) => {
      const tokens = await upstreamTokens(services.store.db, services.sealer, `${identity.provider}|${String(identity.user_id)}`);
      return tokens ? { ...identity, ...tokens } : identity;
    }),
  );
  return { ...view, identities };
}
