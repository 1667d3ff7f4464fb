/**
 * POST /dbconnections/signup (reference C.6; auth0-js `signup`): a new user of a database connection. 200 with
 * `{_id, email, email_verified, …}`; errors in the /dbconnections shape. A verification email is queued in
 * the signup's transaction unless the connection says `send_verification_email: false`.
 */
import { Type, type Static } from '@fastify/type-provider-typebox';
import { signUpWithPassword } from '../../connections/database-users.js';
import { eventContextFrom } from '../../events/context.js';
import { checkSignupThrottle } from '../../protection/checks.js';
import { PasswordLeaked, TooManyAttempts } from '../../protection/errors.js';
import { errorResponses } from '../../http/responses.js';
import type { App, Services } from '../../services.js';
import type { User } from '../../store/users.js';
import { clientAndConnection, dbConnectionsCors, DbConnectionsBadRequest, DbConnectionsUnauthorized, sendPasswordRejected, UserExists } from './common.js';

const Text = (max: number) => Type.String({ minLength: 1, maxLength: max });

/** Field limits of reference C.6; other properties (auth0-js adds `state` and whatever the app passes) are ignored. */
const SignupBody = Type.Object(
  {
    client_id: Text(64),
    connection: Text(128),
    email: Text(320),
    password: Text(1024),
    username: Type.Optional(Type.String({ maxLength: 128 })),
    given_name: Type.Optional(Text(150)),
    family_name: Type.Optional(Text(150)),
    name: Type.Optional(Text(300)),
    nickname: Type.Optional(Text(300)),
    picture: Type.Optional(Text(2048)),
    user_metadata: Type.Optional(
      Type.Record(Type.String(), Type.String({ maxLength: 500 }), {
        maxProperties: 10,
        description: 'At most 10 properties; names of at most 100 characters; string values of at most 500',
      }),
    ),
  },
  { additionalProperties: true },
);

const SignupResponse = Type.Object({
  _id: Type.String({ description: 'The user id without its `auth0|` prefix' }),
  email: Type.String(),
  email_verified: Type.Boolean(),
  username: Type.Optional(Type.String()),
  given_name: Type.Optional(Type.String()),
  family_name: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
  nickname: Type.Optional(Type.String()),
  picture: Type.Optional(Type.String()),
  user_metadata: Type.Optional(Type.Record(Type.String(), Type.String())),
});

function checkFields(body: Static<typeof SignupBody>): void {
  if (body.picture !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(body.picture);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) throw new DbConnectionsBadRequest('picture must be an http(s) URL', 'invalid_signup');
  }
  for (const key of Object.keys(body.user_metadata ?? {})) {
    if (key.length === 0 || key.length > 100) throw new DbConnectionsBadRequest('user_metadata property names must have 1 to 100 characters', 'invalid_signup');
  }
}

function present(user: User, metadataSent: boolean): Static<typeof SignupResponse> {
  return {
    _id: user.user_id.slice(user.user_id.indexOf('|') + 1),
    email: user.email ?? '',
    email_verified: user.email_verified,
    ...(user.username !== null && { username: user.username }),
    ...user.profile,
    ...(metadataSent && { user_metadata: user.user_metadata as Record<string, string> }),
  };
}

export function registerSignup(app: App, services: Services): void {
  app.post('/dbconnections/signup', {
    schema: {
      tags: ['authentication'],
      summary: 'Sign up a user of a database connection',
      body: SignupBody,
      response: {
        200: SignupResponse,
        ...errorResponses('dbconnections', {
          400: 'invalid_signup (a field its limits refuse), invalid_request (an unknown client or connection), user_exists, username_exists, invalid_password (with `policy`: the password policy refused it), password_leaked',
          403: 'unauthorized: signups are disabled for the connection, or the browser origin is not allowed for the client',
          429: 'too_many_attempts: too many signups from this IP',
        }),
      },
    },
    // Shape errors become `invalid_signup` in this family rather than the generic invalid_request.
    attachValidation: true,
    config: { rateLimit: { bucket: 'dbconnections' }, cors: dbConnectionsCors(services) },
    handler: async (request, reply) => {
      reply.header('cache-control', 'no-store');
      if (request.validationError) {
        throw new DbConnectionsBadRequest(`Invalid sign up: ${request.validationError.message.replace(/^body\/?/, '')}`.trim(), 'invalid_signup');
      }
      const body = request.body;
      checkFields(body);
      const { client, connection } = await clientAndConnection(request, services, body.client_id, body.connection);
      // Attack protection (C.10): suspicious-IP throttling of signups here; breached passwords in signUpWithPassword.
      if ((await checkSignupThrottle(services, connection, request.ip)) === 'too_many_attempts') throw new TooManyAttempts('suspicious_ip');
      const result = await signUpWithPassword(
        services,
        request.tenant,
        connection,
        {
          email: body.email,
          password: body.password,
          username: body.username,
          given_name: body.given_name,
          family_name: body.family_name,
          name: body.name,
          nickname: body.nickname,
          picture: body.picture,
          user_metadata: body.user_metadata,
        },
        { ...eventContextFrom(request), client_id: client.client_id },
      );
      switch (result.outcome) {
        case 'ok':
          return present(result.user, body.user_metadata !== undefined);
        case 'invalid':
          throw new DbConnectionsBadRequest(result.message, 'invalid_signup');
        case 'password_rejected':
          return sendPasswordRejected(reply, result.check);
        case 'exists':
          throw new UserExists(result.by);
        case 'password_leaked':
          throw new PasswordLeaked();
        case 'disabled':
          throw new DbConnectionsUnauthorized('Sign-ups are disabled for this connection');
      }
    },
  });
}
