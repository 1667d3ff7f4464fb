/**
 * /api/v2/user-blocks (C.10): the blocks brute-force protection puts on a user, or on a login identifier from
 * an IP, read and lifted by an admin. Attack protection writes the rows; expired blocks are not reported.
 * Blocks of a user are those recorded against its id, plus those recorded against one of its identifiers
 * (email, username, phone number) before the user was known.
 */
import { Type } from '@fastify/type-provider-typebox';
import { errorResponses, noContent } from '../http/responses.js';
import { liftLockAsAdministrator } from '../mfa/lock-notice.js';
import type { App, Services } from '../services.js';
import { findPrimaryUser, listUserBlocks, type BlockSelector, type User, type UserBlock } from '../store/users.js';
import { operation } from './operation.js';
import { UserNotFound } from './users.js';

const UserIdParams = Type.Object({ id: Type.String({ minLength: 3, maxLength: 321, pattern: '^[A-Za-z0-9_.-]{1,64}\\|\\S{1,255}$' }) });
const IdentifierQuery = Type.Object(
  {
    identifier: Type.String({ minLength: 1, maxLength: 320 }),
    consider_brute_force_enablement: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
const IdQuery = Type.Object({ consider_brute_force_enablement: Type.Optional(Type.Boolean()) }, { additionalProperties: false });

const BlockedFor = Type.Object({
  blocked_for: Type.Array(Type.Object({ identifier: Type.String(), ip: Type.Optional(Type.String()) }, { additionalProperties: false })),
});

function present(blocks: readonly UserBlock[]) {
  return { blocked_for: blocks.map((b) => ({ identifier: b.identifier, ...(b.ip !== null && { ip: b.ip }) })) };
}

function selectorOf(user: User): BlockSelector {
  return { userId: user.user_id, identifiers: [user.email, user.username, user.phone_number].filter((i): i is string => Boolean(i)) };
}

export function registerUserBlocks(api: App, services: Services): void {
  const db = services.store.db;

  async function userOr404(tenantId: string, id: string): Promise<User> {
    const user = await findPrimaryUser(db, tenantId, id);
    if (!user) throw new UserNotFound();
    return user;
  }

  api.get('/user-blocks/:id', {
    ...operation(['read:users'], {
      summary: "Get a user's blocks",
      params: UserIdParams,
      querystring: IdQuery,
      response: { 200: BlockedFor, ...errorResponses('management', { 404: 'inexistent_user' }) },
    }),
    handler: async (request) => {
      const user = await userOr404(request.tenant.id, request.params.id);
      return present(await listUserBlocks(db, request.tenant.id, selectorOf(user)));
    },
  });

  api.delete('/user-blocks/:id', {
    ...operation(['update:users'], {
      summary: "Lift a user's blocks",
      params: UserIdParams,
      response: { 204: noContent('Unblocked'), ...errorResponses('management', { 404: 'inexistent_user' }) },
    }),
    handler: async (request, reply) => {
      const user = await userOr404(request.tenant.id, request.params.id);
      await services.attackProtection.liftBlocks(request.tenant.id, selectorOf(user));
      // Wrong second-factor answers lock the user too (mfa/lockout.ts): the same unblock lifts that, and spends
      // the links of its notices (mfa/lock-notice.ts).
      await liftLockAsAdministrator(services, request.tenant.id, user.user_id);
      return reply.code(204).send();
    },
  });

  api.get('/user-blocks', {
    ...operation(['read:users'], { summary: 'Get the blocks of a login identifier', querystring: IdentifierQuery, response: { 200: BlockedFor } }),
    handler: async (request) => present(await listUserBlocks(db, request.tenant.id, { identifier: request.query.identifier })),
  });

  api.delete('/user-blocks', {
    ...operation(['update:users'], {
      summary: 'Lift the blocks of a login identifier',
      querystring: IdentifierQuery,
      response: { 204: noContent('Unblocked') },
    }),
    handler: async (request, reply) => {
      await services.attackProtection.liftBlocks(request.tenant.id, { identifier: request.query.identifier });
      return reply.code(204).send();
    },
  });
}
