/**
 * Reference features this server does not offer, answered honestly so that tools which read a whole tenant
 * (auth0-deploy-cli's dump, Terraform's refresh) work: each list reads as the reference's empty shape (there is
 * nothing of that kind here, and nothing can be made), and every write is a 501 naming the feature. Nothing is
 * stored: a write that succeeded would claim a behaviour (a rule running at login, a form shown
 * at signup) that never happens.
 *
 * The table below is the whole list; README "Reference features not offered" shows it to operators.
 */
import { Type, type TSchema } from '@fastify/type-provider-typebox';
import { NotFound, NotOffered } from '../http/errors.js';
import { asSent, errorResponses } from '../http/responses.js';
import type { App } from '../services.js';
import { operation } from './operation.js';

/** How an empty list of the reference looks. */
type EmptyShape =
  /** `[]`, or with include_totals `{start, limit, length, total, <key>: []}`, or with from/take `{<key>: []}`. */
  | { paging: 'offset'; key: string }
  /** Always `[]`. */
  | { paging: 'array' }
  /** The Actions family's own paging: `{<key>: [], total, page, per_page}`. */
  | { paging: 'actions'; key: string }
  /** Always `{<key>: []}` (checkpoint lists, and lists without paging). */
  | { paging: 'object'; key: string }
  /**
   * A single settings object of the feature (an MFA provider's credentials): there is none, so 404 `not_offered`,
   * as the reference answers where the feature is not available.
   */
  | { paging: 'none' }
  /** `{}`: a settings object with nothing set (a prompt's partials). */
  | { paging: 'empty-object' };

export interface NotOfferedFeature {
  /** As the message says it: "Rules are not offered…". */
  feature: string;
  why: string;
  readScope: string;
  writeScope: { create?: string; update?: string; delete?: string };
  reads: { path: string; shape: EmptyShape }[];
  writes: { method: 'POST' | 'PATCH' | 'PUT' | 'DELETE'; path: string; acceptsEmpty?: boolean }[];
}

export const NOT_OFFERED: NotOfferedFeature[] = [
  {
    feature: 'Rules',
    why: 'login-time code; the reference has retired them for Actions',
    readScope: 'read:rules',
    writeScope: { create: 'create:rules', update: 'update:rules', delete: 'delete:rules' },
    reads: [{ path: '/rules', shape: { paging: 'offset', key: 'rules' } }],
    writes: [
      { method: 'POST', path: '/rules' },
      { method: 'PATCH', path: '/rules/:id' },
      { method: 'DELETE', path: '/rules/:id' },
    ],
  },
  {
    feature: 'Rules configs',
    why: 'the settings rules read, and rules are not offered',
    readScope: 'read:rules_configs',
    writeScope: { update: 'update:rules_configs', delete: 'delete:rules_configs' },
    reads: [{ path: '/rules-configs', shape: { paging: 'array' } }],
    writes: [
      { method: 'PUT', path: '/rules-configs/:key' },
      { method: 'DELETE', path: '/rules-configs/:key' },
    ],
  },
  {
    feature: 'Hooks',
    why: 'extensibility code run by the reference; retired there for Actions',
    readScope: 'read:hooks',
    writeScope: { create: 'create:hooks', update: 'update:hooks', delete: 'delete:hooks' },
    reads: [{ path: '/hooks', shape: { paging: 'offset', key: 'hooks' } }],
    writes: [
      { method: 'POST', path: '/hooks' },
      { method: 'PATCH', path: '/hooks/:id' },
      { method: 'DELETE', path: '/hooks/:id' },
    ],
  },
  {
    feature: 'Actions',
    why: 'custom code run at login, signup and other triggers: this server runs no tenant code',
    readScope: 'read:actions',
    writeScope: { create: 'create:actions', update: 'update:actions', delete: 'delete:actions' },
    reads: [
      { path: '/actions/actions', shape: { paging: 'actions', key: 'actions' } },
      { path: '/actions/modules', shape: { paging: 'actions', key: 'modules' } },
      { path: '/actions/triggers', shape: { paging: 'object', key: 'triggers' } },
      { path: '/actions/triggers/:triggerId/bindings', shape: { paging: 'actions', key: 'bindings' } },
    ],
    writes: [
      { method: 'POST', path: '/actions/actions' },
      { method: 'PATCH', path: '/actions/actions/:id' },
      { method: 'DELETE', path: '/actions/actions/:id' },
      { method: 'POST', path: '/actions/actions/:id/deploy' },
      { method: 'POST', path: '/actions/modules' },
      { method: 'PATCH', path: '/actions/modules/:id' },
      { method: 'DELETE', path: '/actions/modules/:id' },
      { method: 'PATCH', path: '/actions/triggers/:triggerId/bindings' },
    ],
  },
  {
    feature: 'Forms',
    why: 'custom steps in the hosted login, built with the reference’s form designer',
    readScope: 'read:forms',
    writeScope: { create: 'create:forms', update: 'update:forms', delete: 'delete:forms' },
    reads: [{ path: '/forms', shape: { paging: 'offset', key: 'forms' } }],
    writes: [
      { method: 'POST', path: '/forms' },
      { method: 'PATCH', path: '/forms/:id' },
      { method: 'DELETE', path: '/forms/:id' },
    ],
  },
  {
    feature: 'Flows',
    why: 'server-side automations behind forms, and the vault connections they call',
    readScope: 'read:flows',
    writeScope: { create: 'create:flows', update: 'update:flows', delete: 'delete:flows' },
    reads: [
      { path: '/flows', shape: { paging: 'offset', key: 'flows' } },
      { path: '/flows/vault/connections', shape: { paging: 'offset', key: 'connections' } },
    ],
    writes: [
      { method: 'POST', path: '/flows' },
      { method: 'PATCH', path: '/flows/:id' },
      { method: 'DELETE', path: '/flows/:id' },
      { method: 'POST', path: '/flows/vault/connections' },
      { method: 'PATCH', path: '/flows/vault/connections/:id' },
      { method: 'DELETE', path: '/flows/vault/connections/:id' },
    ],
  },
  {
    feature: 'Network ACLs',
    why: 'the reference’s edge firewall; put yours in front of this server (GATEHOUSE_TRUSTED_PROXIES)',
    readScope: 'read:network_acls',
    writeScope: { create: 'create:network_acls', update: 'update:network_acls', delete: 'delete:network_acls' },
    reads: [{ path: '/network-acls', shape: { paging: 'offset', key: 'network_acls' } }],
    writes: [
      { method: 'POST', path: '/network-acls' },
      { method: 'PATCH', path: '/network-acls/:id' },
      { method: 'DELETE', path: '/network-acls/:id' },
    ],
  },
  {
    feature: 'Self-service profiles',
    why: 'the reference’s hosted SSO set-up for enterprise customers',
    readScope: 'read:self_service_profiles',
    writeScope: { create: 'create:self_service_profiles', update: 'update:self_service_profiles', delete: 'delete:self_service_profiles' },
    reads: [{ path: '/self-service-profiles', shape: { paging: 'offset', key: 'self_service_profiles' } }],
    writes: [
      { method: 'POST', path: '/self-service-profiles' },
      { method: 'PATCH', path: '/self-service-profiles/:id' },
      { method: 'DELETE', path: '/self-service-profiles/:id' },
    ],
  },
  {
    feature: 'Token exchange profiles',
    why: 'custom token exchange, which needs Actions',
    readScope: 'read:token_exchange_profiles',
    writeScope: { create: 'create:token_exchange_profiles', update: 'update:token_exchange_profiles', delete: 'delete:token_exchange_profiles' },
    reads: [{ path: '/token-exchange-profiles', shape: { paging: 'object', key: 'token_exchange_profiles' } }],
    writes: [
      { method: 'POST', path: '/token-exchange-profiles' },
      { method: 'PATCH', path: '/token-exchange-profiles/:id' },
      { method: 'DELETE', path: '/token-exchange-profiles/:id' },
    ],
  },
  {
    feature: 'Phone providers and templates',
    why: 'SMS goes through the sms connection’s gateway (GATEHOUSE_SMS_GATEWAY_URL), with the connection’s own template',
    readScope: 'read:phone_providers',
    writeScope: { create: 'create:phone_providers', update: 'update:phone_providers', delete: 'delete:phone_providers' },
    reads: [
      { path: '/branding/phone/providers', shape: { paging: 'object', key: 'providers' } },
      { path: '/branding/phone/templates', shape: { paging: 'object', key: 'templates' } },
    ],
    writes: [
      { method: 'POST', path: '/branding/phone/providers' },
      { method: 'PATCH', path: '/branding/phone/providers/:id' },
      { method: 'DELETE', path: '/branding/phone/providers/:id' },
      { method: 'POST', path: '/branding/phone/templates' },
      { method: 'PATCH', path: '/branding/phone/templates/:id' },
      { method: 'DELETE', path: '/branding/phone/templates/:id' },
    ],
  },
  {
    feature: 'Universal Login templates and themes',
    why: 'the hosted pages are this server’s own; their look is /api/v2/branding and their texts /api/v2/prompts',
    readScope: 'read:branding',
    writeScope: { create: 'update:branding', update: 'update:branding', delete: 'delete:branding' },
    reads: [
      { path: '/branding/templates/universal-login', shape: { paging: 'none' } },
      { path: '/branding/themes/default', shape: { paging: 'none' } },
    ],
    writes: [
      { method: 'PUT', path: '/branding/templates/universal-login' },
      { method: 'DELETE', path: '/branding/templates/universal-login' },
      { method: 'POST', path: '/branding/themes' },
      { method: 'PATCH', path: '/branding/themes/:themeId' },
      { method: 'DELETE', path: '/branding/themes/:themeId' },
    ],
  },
  {
    feature: 'Prompt partials and screen rendering',
    why: 'custom HTML and client-side rendering inside the hosted pages; their texts are /api/v2/prompts/{prompt}/custom-text',
    readScope: 'read:prompts',
    writeScope: { update: 'update:prompts' },
    reads: [
      { path: '/prompts/:prompt/partials', shape: { paging: 'empty-object' } },
      { path: '/prompts/rendering', shape: { paging: 'offset', key: 'configs' } },
    ],
    writes: [
      { method: 'PUT', path: '/prompts/:prompt/partials' },
      { method: 'PATCH', path: '/prompts/:prompt/screen/:screen/rendering' },
    ],
  },
  {
    // The factors list, one factor's switch and the policies are mfa/ (management/guardian.ts).
    feature: 'SMS, phone and push MFA factors',
    why: 'the second factors offered are TOTP, WebAuthn, email codes and recovery codes, which need no SMS or push provider',
    readScope: 'read:guardian_factors',
    writeScope: { update: 'update:guardian_factors' },
    reads: [
      { path: '/guardian/factors/sms/providers/twilio', shape: { paging: 'none' } },
      { path: '/guardian/factors/phone/providers/twilio', shape: { paging: 'none' } },
      { path: '/guardian/factors/push-notification/providers/apns', shape: { paging: 'none' } },
      { path: '/guardian/factors/push-notification/providers/sns', shape: { paging: 'none' } },
      { path: '/guardian/factors/sms/templates', shape: { paging: 'none' } },
      { path: '/guardian/factors/phone/templates', shape: { paging: 'none' } },
      { path: '/guardian/factors/phone/message-types', shape: { paging: 'none' } },
      { path: '/guardian/factors/phone/selected-provider', shape: { paging: 'none' } },
    ],
    writes: [
      { method: 'PUT', path: '/guardian/factors/sms/providers/twilio' },
      { method: 'PUT', path: '/guardian/factors/phone/providers/twilio' },
      { method: 'PUT', path: '/guardian/factors/push-notification/providers/apns' },
      { method: 'PUT', path: '/guardian/factors/push-notification/providers/sns' },
      { method: 'PUT', path: '/guardian/factors/sms/templates' },
      { method: 'PUT', path: '/guardian/factors/phone/templates' },
      { method: 'PUT', path: '/guardian/factors/phone/message-types' },
      { method: 'PUT', path: '/guardian/factors/phone/selected-provider' },
    ],
  },
  {
    feature: 'User attribute profiles',
    why: 'attribute maps for the reference’s self-service SSO and My Organization; a connection maps its own claims',
    readScope: 'read:user_attribute_profiles',
    writeScope: { create: 'create:user_attribute_profiles', update: 'update:user_attribute_profiles', delete: 'delete:user_attribute_profiles' },
    reads: [{ path: '/user-attribute-profiles', shape: { paging: 'object', key: 'user_attribute_profiles' } }],
    writes: [
      { method: 'POST', path: '/user-attribute-profiles' },
      { method: 'PATCH', path: '/user-attribute-profiles/:id' },
      { method: 'DELETE', path: '/user-attribute-profiles/:id' },
    ],
  },
  {
    feature: 'Connection profiles',
    why: 'connection templates for the reference’s self-service SSO and My Organization',
    readScope: 'read:connection_profiles',
    writeScope: { create: 'create:connection_profiles', update: 'update:connection_profiles', delete: 'delete:connection_profiles' },
    reads: [{ path: '/connection-profiles', shape: { paging: 'object', key: 'connection_profiles' } }],
    writes: [
      { method: 'POST', path: '/connection-profiles' },
      { method: 'PATCH', path: '/connection-profiles/:id' },
      { method: 'DELETE', path: '/connection-profiles/:id' },
    ],
  },
  {
    feature: 'Directory provisioning',
    why: 'inbound user sync from a Google Workspace directory; users arrive here at login, by the Management API or by import jobs',
    readScope: 'read:directory_provisionings',
    writeScope: { create: 'create:directory_provisionings', update: 'update:directory_provisionings', delete: 'delete:directory_provisionings' },
    reads: [
      { path: '/connections-directory-provisionings', shape: { paging: 'object', key: 'directory_provisionings' } },
      { path: '/connections/:id/directory-provisioning', shape: { paging: 'none' } },
    ],
    writes: [
      { method: 'POST', path: '/connections/:id/directory-provisioning' },
      { method: 'PATCH', path: '/connections/:id/directory-provisioning' },
      { method: 'DELETE', path: '/connections/:id/directory-provisioning' },
    ],
  },
  {
    feature: 'Organization discovery domains',
    why: 'choosing the organization by the email domain at the reference’s login; here home-realm discovery picks a connection by domain (connection options.domain_aliases)',
    readScope: 'read:organization_discovery_domains',
    writeScope: { create: 'create:organization_discovery_domains', update: 'update:organization_discovery_domains', delete: 'delete:organization_discovery_domains' },
    reads: [{ path: '/organizations/:id/discovery-domains', shape: { paging: 'object', key: 'domains' } }],
    writes: [
      { method: 'POST', path: '/organizations/:id/discovery-domains' },
      { method: 'PATCH', path: '/organizations/:id/discovery-domains/:domainId' },
      { method: 'DELETE', path: '/organizations/:id/discovery-domains/:domainId' },
    ],
  },
  {
    // The catalogue has no scope of its own for these: the organization's own scopes guard them.
    feature: 'Organization applications',
    why: 'applications owned by an organization; here an application’s organization_usage and the organization’s client grants say who signs in where',
    readScope: 'read:organizations',
    writeScope: { create: 'update:organizations', delete: 'update:organizations' },
    reads: [{ path: '/organizations/:id/clients', shape: { paging: 'object', key: 'clients' } }],
    writes: [
      { method: 'POST', path: '/organizations/:id/clients' },
      { method: 'DELETE', path: '/organizations/:id/clients' },
    ],
  },
  {
    // The read is real (user-roles.ts: the permissions of the user's roles); only assigning them one by one is not.
    feature: 'Permissions assigned directly to users',
    why: 'a user’s permissions come from their roles here; give the user a role that holds them',
    readScope: 'read:users',
    writeScope: { create: 'update:users', delete: 'update:users' },
    reads: [],
    writes: [
      { method: 'POST', path: '/users/:id/permissions' },
      { method: 'DELETE', path: '/users/:id/permissions' },
    ],
  },
];

const EmptyList = Type.Array(Type.Never(), { maxItems: 0 });

function emptyShapeSchema(shape: EmptyShape): TSchema {
  switch (shape.paging) {
    case 'none':
      return Type.Never();
    case 'empty-object':
      return Type.Object({}, { additionalProperties: false });
    case 'array':
      return EmptyList;
    case 'object':
      return Type.Object({ [shape.key]: EmptyList });
    case 'actions':
      return Type.Object({ [shape.key]: EmptyList, total: Type.Literal(0), page: Type.Integer(), per_page: Type.Integer() });
    case 'offset':
      return Type.Union(
        [
          EmptyList,
          Type.Object({ start: Type.Integer(), limit: Type.Integer(), length: Type.Literal(0), total: Type.Literal(0), [shape.key]: EmptyList }, { title: 'With totals' }),
          Type.Object({ [shape.key]: EmptyList }, { title: 'Checkpoint page' }),
        ],
        { description: `An empty list: an array, or with include_totals the empty page and its totals, or with from/take an empty checkpoint page` },
      );
  }
}

interface ListQuery {
  page?: number;
  per_page?: number;
  include_totals?: boolean;
  from?: string;
  take?: number;
}

function emptyShape(shape: EmptyShape, query: ListQuery, feature: string, message: string): unknown {
  const perPage = query.per_page ?? 50;
  const page = query.page ?? 0;
  switch (shape.paging) {
    case 'empty-object':
      return {};
    case 'none':
      throw new NotFound(`There is none: ${feature} ${message}`, 'not_offered');
    case 'array':
      return [];
    case 'object':
      return { [shape.key]: [] };
    case 'actions':
      return { [shape.key]: [], total: 0, page, per_page: perPage };
    case 'offset':
      if (query.from !== undefined || query.take !== undefined) return { [shape.key]: [] };
      return query.include_totals ? { start: page * perPage, limit: perPage, length: 0, total: 0, [shape.key]: [] } : [];
  }
}

/**
 * The paging parameters every reference list takes; its filters (`enabled`, `triggerId`, `deployed`, …) are
 * accepted too, since whatever they select from an empty list is empty.
 */
const ListQuery = Type.Object(
  {
    page: Type.Optional(Type.Integer({ minimum: 0 })),
    per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    include_totals: Type.Optional(Type.Boolean()),
    from: Type.Optional(Type.String({ maxLength: 200 })),
    take: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  },
  { additionalProperties: Type.String({ maxLength: 1000 }) },
);

const SCOPE_OF_METHOD = { POST: 'create', PUT: 'update', PATCH: 'update', DELETE: 'delete' } as const;

export function registerNotOffered(api: App): void {
  for (const entry of NOT_OFFERED) {
    const message = `are not offered by this server (${entry.why}).`;
    for (const read of entry.reads) {
      const absent = read.shape.paging === 'none';
      api.get(read.path, {
        ...operation([entry.readScope], {
          summary: absent ? `${entry.feature}: not offered, never found` : `${entry.feature}: not offered, always empty`,
          tags: ['management', 'not offered'],
          querystring: ListQuery,
          response: absent
            ? errorResponses('management', { 404: `not_offered: ${entry.feature} ${message}` })
            : { 200: Type.Unsafe<unknown>(asSent(emptyShapeSchema(read.shape))) },
        }),
        handler: async (request, reply) => reply.send(emptyShape(read.shape, request.query as ListQuery, entry.feature, message)),
      });
    }
    for (const write of entry.writes) {
      const scope = entry.writeScope[SCOPE_OF_METHOD[write.method]] ?? entry.writeScope.update!;
      api.route({
        method: write.method,
        url: write.path,
        ...operation([scope], {
          summary: `${entry.feature}: not offered (always 501)`,
          tags: ['management', 'not offered'],
          response: {
            ...(write.acceptsEmpty && { 200: Type.Unsafe<unknown>(asSent(EmptyList)) }),
            ...errorResponses('management', { 501: `not_offered: ${entry.feature} ${message}` }),
          },
        }),
        handler: async (request, reply) => {
          if (write.acceptsEmpty && Array.isArray(request.body) && request.body.length === 0) return reply.send([]);
          throw new NotOffered(entry.feature, message);
        },
      });
    }
  }
}
