/**
 * /api/v2/rate-limit-policies: the tenant's rate limits, one policy per bucket of http/rate-limit/buckets.ts
 * (`token`, `jwks`, `management`, …), each a token bucket of `capacity` requests refilled at `per_second`.
 * Read, changed (PATCH) and set back to the default (DELETE); the buckets themselves are fixed, so nothing is
 * created. The limits are stored in the tenant's settings; every node reads them with the tenant and drops its
 * copy when any node changes them (tenancy/change-bus.ts), and the counters are shared through Redis.
 *
 * Not the reference's early-access policies (per-client rules of its Authentication API, `rlp_` ids): those
 * operations (POST) answer 405.
 */
import { Type, type Static } from '@fastify/type-provider-typebox';
import { DEFAULT_LIMITS, isBucketName, type BucketName } from '../http/rate-limit/buckets.js';
import { NotFound } from '../http/errors.js';
import { errorResponses, noContent } from '../http/responses.js';
import type { App, Services } from '../services.js';
import { findTenantById, lockTenant, updateTenant, type Tenant, type TenantSettings } from '../store/tenants.js';
import { operation } from './operation.js';

const Limit = {
  capacity: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Bucket size: how many requests may come at once' }),
  per_second: Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000, description: 'Refill rate: requests allowed per second over time' }),
};

const Policy = Type.Object({
  id: Type.String({ description: 'The bucket' }),
  description: Type.String(),
  capacity: Limit.capacity,
  per_second: Limit.per_second,
  /** True when the tenant set this bucket's limit; false when it is the default. */
  customized: Type.Boolean(),
  default: Type.Object({ capacity: Limit.capacity, per_second: Limit.per_second }),
});
type Policy = Static<typeof Policy>;

const PolicyParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z_]+$' }) });
const PolicyPatch = Type.Object({ capacity: Type.Optional(Limit.capacity), per_second: Type.Optional(Limit.per_second) }, { additionalProperties: false, minProperties: 1 });

/** What each bucket counts, in the words of its route (buckets.ts). */
const DESCRIPTIONS: Record<BucketName, string> = {
  jwks: 'GET /.well-known/jwks.json, per client IP',
  discovery: 'The discovery documents, per client IP',
  token: 'POST /oauth/token, per client IP',
  management: 'Every /api/v2 operation, per calling client',
  userinfo: '/userinfo, per client IP',
  authorize: '/authorize and its resume step, per client IP',
  login: 'Form posts of the hosted pages, per client IP',
  passwordless: 'POST /passwordless/start and /verify, per client IP',
  dbconnections: 'POST /dbconnections/signup and /change_password, per client IP',
};

class PolicyNotFound extends NotFound {
  constructor(id: string) {
    super(`No rate limit policy ${JSON.stringify(id)}; the policies are: ${Object.keys(DEFAULT_LIMITS).join(', ')}`, 'inexistent_rate_limit_policy');
  }
}

function present(settings: TenantSettings, bucket: BucketName): Policy {
  const fallback = DEFAULT_LIMITS[bucket];
  const set = settings.rate_limits?.[bucket];
  return {
    id: bucket,
    description: DESCRIPTIONS[bucket],
    capacity: set?.capacity ?? fallback.capacity,
    per_second: set?.per_second ?? fallback.perSecond,
    customized: set !== undefined,
    default: { capacity: fallback.capacity, per_second: fallback.perSecond },
  };
}

function bucketOr404(id: string): BucketName {
  if (!isBucketName(id)) throw new PolicyNotFound(id);
  return id;
}

export function registerRateLimitPolicies(api: App, services: Services): void {
  const db = services.store.db;

  /** Fresh from the database (request.tenant may be a copy), locked for the rest of the transaction. */
  async function lockedTenant(trx: typeof db, id: string): Promise<Tenant> {
    await lockTenant(trx, id);
    const tenant = await findTenantById(trx, id);
    if (!tenant) throw new NotFound('The tenant does not exist.', 'inexistent_tenant');
    return tenant;
  }

  api.get('/rate-limit-policies', {
    ...operation(['read:rate_limit_policies'], { summary: "List the tenant's rate limit policies", response: { 200: Type.Array(Policy) } }),
    handler: async (request) => {
      const tenant = await findTenantById(db, request.tenant.id);
      return (Object.keys(DEFAULT_LIMITS) as BucketName[]).map((bucket) => present(tenant?.settings ?? {}, bucket));
    },
  });

  api.get('/rate-limit-policies/:id', {
    ...operation(['read:rate_limit_policies'], {
      summary: 'Get a rate limit policy',
      params: PolicyParams,
      response: { 200: Policy, ...errorResponses('management', { 404: 'inexistent_rate_limit_policy: no such bucket' }) },
    }),
    handler: async (request) => {
      const bucket = bucketOr404(request.params.id);
      const tenant = await findTenantById(db, request.tenant.id);
      return present(tenant?.settings ?? {}, bucket);
    },
  });

  api.patch('/rate-limit-policies/:id', {
    ...operation(['update:rate_limit_policies'], {
      summary: 'Change a rate limit policy',
      params: PolicyParams,
      body: PolicyPatch,
      response: { 200: Policy, ...errorResponses('management', { 404: 'inexistent_rate_limit_policy: no such bucket' }) },
    }),
    handler: async (request) => {
      const bucket = bucketOr404(request.params.id);
      return db.transaction().execute(async (trx) => {
        const tenant = await lockedTenant(trx, request.tenant.id);
        const current = present(tenant.settings, bucket);
        const limit = { capacity: request.body.capacity ?? current.capacity, per_second: request.body.per_second ?? current.per_second };
        const settings: TenantSettings = { ...tenant.settings, rate_limits: { ...tenant.settings.rate_limits, [bucket]: limit } };
        await updateTenant(trx, tenant.id, { settings });
        return present(settings, bucket);
      });
    },
  });

  api.delete('/rate-limit-policies/:id', {
    ...operation(['delete:rate_limit_policies'], {
      summary: 'Set a rate limit policy back to its default',
      params: PolicyParams,
      response: { 204: noContent('Back to the default limit'), ...errorResponses('management', { 404: 'inexistent_rate_limit_policy: no such bucket' }) },
    }),
    handler: async (request, reply) => {
      const bucket = bucketOr404(request.params.id);
      await db.transaction().execute(async (trx) => {
        const tenant = await lockedTenant(trx, request.tenant.id);
        if (!tenant.settings.rate_limits?.[bucket]) return;
        const { [bucket]: _dropped, ...rest } = tenant.settings.rate_limits;
        const { rate_limits: _all, ...others } = tenant.settings;
        await updateTenant(trx, tenant.id, { settings: Object.keys(rest).length > 0 ? { ...others, rate_limits: rest } : others });
      });
      return reply.code(204).send();
    },
  });
}
