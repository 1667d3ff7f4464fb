/**
 * The MFA API driven by auth0's own, unmodified client libraries:
 *  - `auth0@7`'s AuthenticationClient (the package's `auth0/legacy` entry point: v7 ships it there, the v4 API):
 *    its password grant surfaces our `mfa_required` as an AuthApiError whose body carries the mfa_token. It has
 *    no MFA methods of its own;
 *  - `@auth0/auth0-auth-js`'s AuthClient (what auth0@7's README names for authentication; auth0-spa-js is built
 *    on it): `mfa.listAuthenticators`, `mfa.enrollAuthenticator`, `mfa.challengeAuthenticator` and `mfa.verify`
 *    for the otp, oob and recovery-code grants, through openid-client and our discovery document.
 * The libraries speak https only: the server's public URL is https://127.0.0.1:<port> and their fetch goes to
 * the same port over plain HTTP, so the issuer they discover is the one they expect. Codes come from otplib,
 * from the secret the API gave.
 */
import { AuthenticationClient } from 'auth0/legacy';
import { AuthClient, isMfaRequiredError, MfaVerifyError } from '@auth0/auth0-auth-js';
import { generateSync } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mailTo } from '../../test-support/operation-examples.js';
import { managementToken, startTestServer, type TestServer } from '../../test-support/server.js';
import { freePort } from '../../test-support/services.js';
import { DATABASE_CONNECTION_NAME } from '../../tenancy/bootstrap.js';
import { createClient, createUser, decodeJwt, PASSWORD, type TestClient } from '../user-tokens/testing.js';
import { PASSWORD_REALM_GRANT } from '../token/password-realm.js';
import { MFA_OOB_GRANT, MFA_OTP_GRANT, MFA_RECOVERY_CODE_GRANT } from './grant-types.js';

describe('the MFA API with auth0@7 and auth0-auth-js', () => {
  let server: TestServer;
  let app: TestClient;
  let domain: string;
  const codeAt = (secret: string, offsetSeconds = 0) => generateSync({ secret, epoch: Math.floor(Date.now() / 1000) + offsetSeconds });

  /** The libraries' https requests, to this server over plain HTTP. */
  const plainFetch: typeof fetch = (input, init) => {
    const toPlain = (url: string) => url.replace(/^https:\/\/127\.0\.0\.1:/, 'http://127.0.0.1:');
    if (input instanceof Request) return fetch(new Request(toPlain(input.url), input), init);
    return fetch(toPlain(String(input)), init);
  };

  beforeAll(async () => {
    const port = await freePort();
    domain = `127.0.0.1:${port}`;
    server = await startTestServer({ port, env: { GATEHOUSE_PUBLIC_URL: `https://${domain}` } });
    const management = await managementToken(server);
    const manage = (path: string, body: unknown) =>
      fetch(`http://${domain}/api/v2${path}`, { method: 'PUT', headers: { authorization: `Bearer ${management}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    for (const factor of ['otp', 'email', 'recovery-code']) expect((await manage(`/guardian/factors/${factor}`, { enabled: true })).status).toBe(200);
    expect((await manage('/guardian/policies', ['all-applications'])).status).toBe(200);
    app = await createClient(server, {
      token_endpoint_auth_method: 'client_secret_post',
      grant_types: ['password', PASSWORD_REALM_GRANT, 'refresh_token', MFA_OTP_GRANT, MFA_OOB_GRANT, MFA_RECOVERY_CODE_GRANT],
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  /** auth0@7's AuthenticationClient: the password-realm grant ends in mfa_required; its mfa_token. */
  async function mfaTokenFromAuth0(email: string): Promise<string> {
    const auth0 = new AuthenticationClient({ domain, clientId: app.client.client_id, clientSecret: app.secret!, fetch: plainFetch });
    const error = await auth0.oauth.passwordGrant({ username: email, password: PASSWORD, realm: DATABASE_CONNECTION_NAME, scope: 'openid email offline_access' }).then(
      () => undefined,
      (e: unknown) => e as { error?: string; error_description?: string; statusCode?: number; body?: string },
    );
    expect(error).toMatchObject({ error: 'mfa_required', error_description: 'Multifactor authentication required', statusCode: 403 });
    const body = JSON.parse(error!.body!) as { mfa_token?: string };
    expect(body.mfa_token).toEqual(expect.any(String));
    return body.mfa_token!;
  }

  const authClient = () => new AuthClient({ domain, clientId: app.client.client_id, clientSecret: app.secret!, customFetch: plainFetch });

  it('enrolls TOTP, answers with otp codes (a wrong and a replayed one refused), then a recovery code and an emailed code', async () => {
    const user = await createUser(server);
    const client = authClient();
    const mfaToken = await mfaTokenFromAuth0(user.email!);

    expect(await client.mfa.listAuthenticators({ mfaToken })).toEqual([]);
    const enrollment = await client.mfa.enrollAuthenticator({ authenticatorTypes: ['otp'], mfaToken });
    expect(enrollment).toMatchObject({ authenticatorType: 'otp', secret: expect.any(String), barcodeUri: expect.stringMatching(/^otpauth:\/\/totp\//), recoveryCodes: [expect.any(String)] });
    if (enrollment.authenticatorType !== 'otp') throw new Error('expected an otp enrollment');
    const { secret } = enrollment;
    const recovery = enrollment.recoveryCodes![0]!;

    const right = codeAt(secret);
    const wrong = await client.mfa.verify({ mfaToken, factorType: 'otp', otp: right === '000000' ? '111111' : '000000' }).catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(MfaVerifyError);
    expect((wrong as MfaVerifyError).cause).toMatchObject({ error: 'invalid_grant', error_description: 'Invalid otp_code.' });
    const tokens = await client.mfa.verify({ mfaToken, factorType: 'otp', otp: right });
    expect(tokens.accessToken).toEqual(expect.any(String));
    expect(tokens.refreshToken).toEqual(expect.any(String));
    expect(tokens.claims).toMatchObject({ sub: user.user_id, amr: ['pwd', 'otp', 'mfa'] });

    // The same code again, with a new mfa_token: a replay.
    const next = await mfaTokenFromAuth0(user.email!);
    const replay = await client.mfa.verify({ mfaToken: next, factorType: 'otp', otp: right }).catch((e: unknown) => e);
    expect((replay as MfaVerifyError).cause).toMatchObject({ error: 'invalid_grant', error_description: 'Invalid otp_code.' });
    const listed = await client.mfa.listAuthenticators({ mfaToken: next });
    expect(listed.map((a) => a.authenticatorType)).toEqual(['otp', 'oob', 'recovery-code']);
    expect(await client.mfa.challengeAuthenticator({ challengeType: 'otp', mfaToken: next })).toEqual({ challengeType: 'otp' });

    // The recovery code, and the next one the response carries.
    const recovered = await client.mfa.verify({ mfaToken: next, factorType: 'recovery-code', recoveryCode: recovery });
    expect(recovered.recoveryCode).toMatch(/^[A-Z2-9]{24}$/);
    expect(decodeJwt(recovered.idToken!).payload).toMatchObject({ amr: ['pwd', 'mfa'] });

    // An emailed code (oob, binding_method prompt).
    const third = await mfaTokenFromAuth0(user.email!);
    const email = listed.find((a) => a.authenticatorType === 'oob')!;
    const challenge = await client.mfa.challengeAuthenticator({ challengeType: 'oob', authenticatorId: email.id, mfaToken: third });
    expect(challenge).toMatchObject({ challengeType: 'oob', oobCode: expect.any(String), bindingMethod: 'prompt' });
    const emailed = /\b(\d{6})\b/.exec(await mailTo({ ...server, url: `http://${domain}` }, user.email!, (text) => text.includes('verification code')))![1]!;
    const byEmail = await client.mfa.verify({ mfaToken: third, factorType: 'oob', oobCode: challenge.oobCode!, bindingCode: emailed });
    expect(byEmail.claims).toMatchObject({ sub: user.user_id, amr: ['pwd', 'mfa'] });
  });

  it('auth-js sees mfa_required with the mfa_token (isMfaRequiredError), and the lock after 10 wrong codes', async () => {
    const user = await createUser(server);
    const client = authClient();
    const required = await client.getTokenByPassword({ username: user.email!, password: PASSWORD, realm: DATABASE_CONNECTION_NAME }).catch((e: unknown) => e);
    expect(isMfaRequiredError(required)).toBe(true);
    const mfaToken = (required as { cause: { mfa_token: string } }).cause.mfa_token;
    const enrollment = await client.mfa.enrollAuthenticator({ authenticatorTypes: ['otp'], mfaToken });
    if (enrollment.authenticatorType !== 'otp') throw new Error('expected an otp enrollment');
    await client.mfa.verify({ mfaToken, factorType: 'otp', otp: codeAt(enrollment.secret) });

    const next = await mfaTokenFromAuth0(user.email!);
    const right = codeAt(enrollment.secret, 30);
    for (let i = 0; i < 10; i++) {
      const wrong = await client.mfa.verify({ mfaToken: next, factorType: 'otp', otp: right === '000000' ? '111111' : '000000' }).catch((e: unknown) => e);
      expect({ i, error: (wrong as MfaVerifyError).cause?.error }).toEqual({ i, error: 'invalid_grant' });
    }
    const locked = await client.mfa.verify({ mfaToken: next, factorType: 'otp', otp: right }).catch((e: unknown) => e);
    expect(locked).toBeInstanceOf(MfaVerifyError);
    expect((locked as MfaVerifyError).cause).toMatchObject({ error: 'too_many_attempts' });
  });
});
