/**
 * A user's second factors through the Management API (the reference's names and scopes):
 *  - /users/{id}/authentication-methods: list (offset paging, collection `authenticators`), get one, delete
 *    one, delete all; WebAuthn credentials (webauthn-roaming, webauthn-platform, passkey) carry the
 *    reference's key_id, public_key, credential_device_type… beside the common fields;
 *  - /users/{id}/enrollments: the user's second-factor enrollments (TOTP as `authenticator`, security keys and
 *    platform authenticators as `webauthn-roaming`/`webauthn-platform`) in the older Guardian shape;
 *  - POST /users/{id}/recovery-code-regeneration: a new recovery code, returned once (the old one stops working);
 *  - DELETE /users/{id}/authenticators: every factor at once, so the user enrolls afresh at the next login.
 * Creating or updating a method through this API (the reference's POST/PATCH) is not offered: a TOTP secret
 * must reach the person's device, which the hosted enrollment page does.
 * Only primary users are addressed (a linked secondary identity is a 404, as elsewhere in /users).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@fastify/type-provider-typebox';
import { NotFound } from '../http/errors.js';
import { errorResponses, noContent } from '../http/responses.js';
import { recoveryCode } from '../mfa/recovery-code.js';
import { forgetRememberedBrowsers } from '../mfa/remember-browser.js';
import { relyingParty, userHandle } from '../mfa/webauthn.js';
import type { App, Services } from '../services.js';
import { deleteMfaEnrollment, deleteMfaEnrollments, findMfaEnrollment, findTenantMfaEnrollment, listMfaEnrollments, type MfaEnrollment } from '../store/mfa-enrollments.js';
import { findPrimaryUser, type User } from '../store/users.js';
import { operation } from './operation.js';
import { recordSecondFactorEvent } from '../logs/second-factor.js';
import { pagedList, paginate, pagingFields } from './pagination.js';
import { USER_ID_PATTERN, UserNotFound } from './users.js';

const UserId = Type.String({ minLength: 3, maxLength: 321, pattern: USER_ID_PATTERN });
const UserParams = Type.Object({ id: UserId });
const MethodParams = Type.Object({ id: UserId, authentication_method_id: Type.String({ minLength: 1, maxLength: 100 }) });
const { from: _from, take: _take, ...offsetPaging } = pagingFields;
const ListQuery = Type.Object(offsetPaging, { additionalProperties: false });

const Method = Type.Object({
  id: Type.String(),
  type: Type.Union([Type.Literal('totp'), Type.Literal('recovery-code'), Type.Literal('webauthn-roaming'), Type.Literal('webauthn-platform'), Type.Literal('passkey')]),
  confirmed: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
  enrolled_at: Type.Optional(Type.String({ format: 'date-time' })),
  last_auth_at: Type.Optional(Type.String({ format: 'date-time' })),
  // WebAuthn credentials (the reference's fields for webauthn-roaming, webauthn-platform and passkey).
  key_id: Type.Optional(Type.String({ description: 'The credential id, base64url' })),
  public_key: Type.Optional(Type.String({ description: 'The COSE public key, base64' })),
  relying_party_identifier: Type.Optional(Type.String()),
  credential_device_type: Type.Optional(Type.Union([Type.Literal('single_device'), Type.Literal('multi_device')])),
  credential_backed_up: Type.Optional(Type.Boolean()),
  identity_user_id: Type.Optional(Type.String()),
  user_agent: Type.Optional(Type.String()),
  transports: Type.Optional(Type.Array(Type.String())),
  user_handle: Type.Optional(Type.String({ description: 'The WebAuthn user handle, base64url' })),
});
const EnrollmentKind = Type.Union([Type.Literal('authenticator'), Type.Literal('webauthn-roaming'), Type.Literal('webauthn-platform')]);
const Enrollment = Type.Object({
  id: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('confirmed')]),
  type: EnrollmentKind,
  auth_method: EnrollmentKind,
  enrolled_at: Type.Optional(Type.String({ format: 'date-time' })),
  last_auth: Type.Optional(Type.String({ format: 'date-time' })),
});

const iso = (ms: number) => new Date(ms).toISOString();

function methodView(e: MfaEnrollment, relyingPartyId: string) {
  const credential = e.credential;
  return {
    id: e.id,
    type: e.type,
    confirmed: e.confirmed,
    created_at: iso(e.createdAt),
    ...(e.confirmedAt !== null && { enrolled_at: iso(e.confirmedAt) }),
    ...(e.lastAuthAt !== null && { last_auth_at: iso(e.lastAuthAt) }),
    ...(credential && {
      key_id: credential.id,
      public_key: Buffer.from(credential.publicKey, 'base64url').toString('base64'),
      relying_party_identifier: relyingPartyId,
      credential_device_type: credential.deviceType === 'multiDevice' ? ('multi_device' as const) : ('single_device' as const),
      credential_backed_up: credential.backedUp,
      identity_user_id: e.userId.slice(e.userId.indexOf('|') + 1),
      ...(credential.userAgent && { user_agent: credential.userAgent }),
      transports: credential.transports,
      user_handle: Buffer.from(userHandle(e.tenantId, e.userId)).toString('base64url'),
    }),
  };
}

/** Guardian enrollments: the second factors (an authenticator app, security keys, this device's authenticator). */
const ENROLLMENT_KINDS = { totp: 'authenticator', 'webauthn-roaming': 'webauthn-roaming', 'webauthn-platform': 'webauthn-platform' } as const;

function enrollmentView(e: MfaEnrollment & { type: keyof typeof ENROLLMENT_KINDS }) {
  const kind = ENROLLMENT_KINDS[e.type];
  return {
    id: e.id,
    status: e.confirmed ? ('confirmed' as const) : ('pending' as const),
    type: kind,
    auth_method: kind,
    ...(e.confirmedAt !== null && { enrolled_at: iso(e.confirmedAt) }),
    ...(e.lastAuthAt !== null && { last_auth: iso(e.lastAuthAt) }),
  };
}

class AuthenticationMethodNotFound extends NotFound {
  constructor() {
    super('The authentication method does not exist.', 'inexistent_authentication_method');
  }
}

export function registerUserAuthenticationMethods(api: App, services: Services): void {
  const db = services.store.db;
  /** `gd_unenroll`: a factor taken away by an administrator (the client of the Management token). */
  const unenrolled = (request: FastifyRequest, user: Pick<User, 'user_id'> & Partial<Pick<User, 'email' | 'username'>>, factor?: MfaEnrollment['type']) => {
    const clientId = request.principal?.clientId;
    recordSecondFactorEvent(services, request, 'gd_unenroll', { userId: user.user_id, userName: user.email ?? user.username ?? undefined, ...(clientId && { client: { client_id: clientId } }) }, factor);
  };

  async function userOr404(tenantId: string, id: string): Promise<User> {
    const user = await findPrimaryUser(db, tenantId, id);
    if (!user) throw new UserNotFound();
    return user;
  }

  api.get('/users/:id/authentication-methods', {
    ...operation(['read:authentication_methods'], {
      summary: "List a user's authentication methods",
      params: UserParams,
      querystring: ListQuery,
      response: { 200: pagedList(Method, 'authenticators'), ...errorResponses('management', { 404: 'inexistent_user' }) },
    }),
    handler: async (request) => {
      const user = await userOr404(request.tenant.id, request.params.id);
      return paginate((await listMfaEnrollments(db, request.tenant.id, user.user_id)).map((e) => methodView(e, relyingParty(request.tenant).id)), request.query, 'authenticators');
    },
  });

  api.get('/users/:id/authentication-methods/:authentication_method_id', {
    ...operation(['read:authentication_methods'], {
      summary: "Get one of a user's authentication methods",
      params: MethodParams,
      response: { 200: Method, ...errorResponses('management', { 404: 'inexistent_user or inexistent_authentication_method' }) },
    }),
    handler: async (request) => {
      const user = await userOr404(request.tenant.id, request.params.id);
      const method = await findMfaEnrollment(db, request.tenant.id, user.user_id, request.params.authentication_method_id);
      if (!method) throw new AuthenticationMethodNotFound();
      return methodView(method, relyingParty(request.tenant).id);
    },
  });

  api.delete('/users/:id/authentication-methods/:authentication_method_id', {
    ...operation(['delete:authentication_methods'], {
      summary: "Delete one of a user's authentication methods",
      params: MethodParams,
      response: { 204: noContent('Deleted'), ...errorResponses('management', { 404: 'inexistent_user or inexistent_authentication_method' }) },
    }),
    handler: async (request, reply) => {
      const user = await userOr404(request.tenant.id, request.params.id);
      if (!(await deleteMfaEnrollment(db, request.tenant.id, user.user_id, request.params.authentication_method_id))) throw new AuthenticationMethodNotFound();
      unenrolled(request, user);
      // A factor taken away (lost, stolen): no browser remembered through it goes on skipping the second step.
      await forgetRememberedBrowsers(db, request.tenant.id, user.user_id);
      return reply.code(204).send();
    },
  });

  // The reference has two paths for removing every factor of a user; one handler serves both.
  const deleteAllFactors = async (request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
    const user = await userOr404(request.tenant.id, request.params.id);
    if ((await deleteMfaEnrollments(db, request.tenant.id, user.user_id)) > 0) unenrolled(request, user);
    // Factors reset: every browser remembered for the user is asked again.
    await forgetRememberedBrowsers(db, request.tenant.id, user.user_id);
    return reply.code(204).send();
  };

  api.post('/users/:id/multifactor/actions/invalidate-remember-browser', {
    ...operation(['update:users'], {
      summary: 'Forget every browser where the user chose "Remember this browser": the next login there asks for the second factor',
      params: UserParams,
      response: { 204: noContent('Forgotten'), ...errorResponses('management', { 404: 'inexistent_user' }) },
    }),
    handler: async (request, reply) => {
      const user = await userOr404(request.tenant.id, request.params.id);
      await forgetRememberedBrowsers(db, request.tenant.id, user.user_id);
      return reply.code(204).send();
    },
  });

  api.delete('/users/:id/authentication-methods', {
    ...operation(['delete:authentication_methods'], {
      summary: "Delete all of a user's authentication methods",
      params: UserParams,
      response: { 204: noContent('Deleted'), ...errorResponses('management', { 404: 'inexistent_user' }) },
    }),
    handler: deleteAllFactors,
  });

  api.get('/users/:id/enrollments', {
    ...operation(['read:users'], {
      summary: "List a user's MFA (authenticator) enrollments",
      params: UserParams,
      response: { 200: Type.Array(Enrollment), ...errorResponses('management', { 404: 'inexistent_user' }) },
    }),
    handler: async (request) => {
      const user = await userOr404(request.tenant.id, request.params.id);
      return (await listMfaEnrollments(db, request.tenant.id, user.user_id))
        .filter((e): e is MfaEnrollment & { type: keyof typeof ENROLLMENT_KINDS } => Object.hasOwn(ENROLLMENT_KINDS, e.type))
        .map(enrollmentView);
    },
  });

  // The reference's enrollment by id, for tools that hold an enrollment id without its user's.
  const EnrollmentParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });
  const enrollmentOr404 = async (tenantId: string, id: string) => {
    const found = await findTenantMfaEnrollment(db, tenantId, id);
    if (!found || !Object.hasOwn(ENROLLMENT_KINDS, found.type)) throw new NotFound(`The enrollment does not exist: ${id}`, 'inexistent_enrollment');
    return found as MfaEnrollment & { type: keyof typeof ENROLLMENT_KINDS };
  };

  api.get('/guardian/enrollments/:id', {
    ...operation(['read:guardian_enrollments'], {
      summary: 'Get an MFA enrollment by its id',
      params: EnrollmentParams,
      response: { 200: Enrollment, ...errorResponses('management', { 404: 'inexistent_enrollment' }) },
    }),
    handler: async (request) => enrollmentView(await enrollmentOr404(request.tenant.id, request.params.id)),
  });

  api.delete('/guardian/enrollments/:id', {
    ...operation(['delete:guardian_enrollments'], {
      summary: 'Delete an MFA enrollment by its id',
      params: EnrollmentParams,
      response: { 204: noContent('Deleted'), ...errorResponses('management', { 404: 'inexistent_enrollment' }) },
    }),
    handler: async (request, reply) => {
      const enrollment = await enrollmentOr404(request.tenant.id, request.params.id);
      if (await deleteMfaEnrollment(db, request.tenant.id, enrollment.userId, enrollment.id)) unenrolled(request, { user_id: enrollment.userId }, enrollment.type);
      // As for any factor taken away: no browser remembered through it goes on skipping the second step.
      await forgetRememberedBrowsers(db, request.tenant.id, enrollment.userId);
      return reply.code(204).send();
    },
  });

  api.post('/users/:id/recovery-code-regeneration', {
    ...operation(['update:users'], {
      summary: "Replace a user's recovery code",
      params: UserParams,
      response: {
        200: Type.Object({ recovery_code: Type.String({ description: 'The new code; shown here only, stored as a hash' }) }),
        ...errorResponses('management', { 404: 'inexistent_user' }),
      },
    }),
    handler: async (request) => {
      const user = await userOr404(request.tenant.id, request.params.id);
      const { code } = await recoveryCode.enroll(
        { db, sealer: services.sealer, tenantId: request.tenant.id, userId: user.user_id, now: Date.now() },
        { issuer: '', label: '' },
      );
      return { recovery_code: code };
    },
  });

  api.delete('/users/:id/authenticators', {
    ...operation(['delete:guardian_enrollments'], {
      summary: "Delete all of a user's MFA factors",
      params: UserParams,
      response: { 204: noContent('Deleted'), ...errorResponses('management', { 404: 'inexistent_user' }) },
    }),
    handler: deleteAllFactors,
  });
}
