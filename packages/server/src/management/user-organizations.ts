/** GET /api/v2/users/{id}/organizations: the organizations a user is a member of, paged like the other lists. */
import { Type } from '@fastify/type-provider-typebox';
import { errorResponses } from '../http/responses.js';
import type { App, Services } from '../services.js';
import { listUserOrganizations } from '../store/organizations.js';
import { findPrimaryUser } from '../store/users.js';
import { operation } from './operation.js';
import { OrganizationBody, presentOrganization } from './organizations.js';
import { pageBody, pagedList, pageWindow, PagingQuery } from './pagination.js';
import { UserNotFound } from './users.js';

const UserIdParams = Type.Object({ id: Type.String({ minLength: 3, maxLength: 321, pattern: '^[A-Za-z0-9_.-]{1,64}\\|\\S{1,255}$' }) });

export function registerUserOrganizations(api: App, services: Services): void {
  const db = services.store.db;
  api.get('/users/:id/organizations', {
    ...operation(['read:organizations'], {
      summary: "List the organizations a user is a member of",
      params: UserIdParams,
      querystring: PagingQuery,
      response: { 200: pagedList(OrganizationBody, 'organizations'), ...errorResponses('management', { 404: 'inexistent_user' }) },
    }),
    handler: async (request) => {
      const tenantId = request.tenant.id;
      const user = await findPrimaryUser(db, tenantId, request.params.id);
      if (!user) throw new UserNotFound();
      const window = pageWindow(request.query);
      const { organizations, total } = await listUserOrganizations(db, tenantId, user.user_id, window);
      return pageBody(window, request.query, organizations.map(presentOrganization), total, 'organizations');
    },
  });
}
