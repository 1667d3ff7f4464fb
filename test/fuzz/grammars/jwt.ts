/**
 * JWTs as an attacker makes them: well-formed tokens signed by a key the server does not know, `alg: none`,
 * HS256 signed with the server's public key (algorithm confusion), unknown or missing `kid`, no `exp`, expired,
 * for another audience or issuer, and strings that are not JWTs at all (wrong part count, bad base64, huge).
 */
import { generateKeyPairSync } from 'node:crypto';
import fc from 'fast-check';
import { SignJWT, importJWK, type JWK } from 'jose';

const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

export interface JwtMaterial {
  /** Signed tokens made before sampling (signing is asynchronous; arbitraries are not). */
  signed: string[];
  issuer: string;
  audiences: string[];
}

/** Signs a few tokens each way the grammar needs, once. */
export async function makeJwtMaterial(issuer: string, audiences: string[], serverJwks: { keys: JWK[] }): Promise<JwtMaterial> {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const serverKid = serverJwks.keys[0]?.kid ?? 'unknown';
  const now = Math.floor(Date.now() / 1000);
  const signed: string[] = [];
  for (const aud of audiences) {
    for (const claims of [
      { sub: 'auth0|fuzz', scope: 'openid read:users', exp: now + 600 },
      { sub: 'auth0|fuzz' },
      { sub: 'fuzz@clients', scope: 'read:users', exp: now - 600 },
      { sub: 'fuzz@clients', azp: 'fuzz', scope: 'read:users update:users', exp: now + 600, iat: now + 10_000 },
    ]) {
      signed.push(await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: serverKid }).setIssuer(issuer).setAudience(aud).sign(privateKey));
      signed.push(await new SignJWT(claims).setProtectedHeader({ alg: 'RS256' }).setIssuer('https://evil.example/').setAudience(aud).sign(privateKey));
    }
  }
  // Algorithm confusion: HS256 keyed with the server's own public key, as text.
  const publicKey = serverJwks.keys[0];
  if (publicKey?.n) {
    const secret = await importJWK({ kty: 'oct', k: b64(JSON.stringify(publicKey)) }, 'HS256');
    signed.push(await new SignJWT({ sub: 'auth0|fuzz', scope: 'read:users', exp: now + 600 }).setProtectedHeader({ alg: 'HS256', kid: serverKid }).setIssuer(issuer).setAudience(audiences[0]!).sign(secret));
  }
  return { signed, issuer, audiences };
}

export function jwtGrammar(material: JwtMaterial): fc.Arbitrary<string> {
  const header = fc.oneof(
    fc.constant({ alg: 'none' }),
    fc.constant({ alg: 'none', typ: 'JWT' }),
    fc.record({ alg: fc.constantFrom('RS256', 'HS256', 'ES256', 'PS256', 'none', 'RS1', ''), kid: fc.option(fc.string({ maxLength: 20 }), { nil: undefined }), typ: fc.option(fc.constantFrom('JWT', 'at+jwt', 'dpop+jwt'), { nil: undefined }) }),
    fc.constant({ alg: 'RS256', crit: ['exp'] }),
    fc.constant({ alg: 'RS256', jku: 'https://evil.example/jwks.json' }),
  );
  const payload = fc.record(
    {
      iss: fc.constantFrom(material.issuer, 'https://evil.example/', ''),
      aud: fc.oneof(fc.constantFrom(...material.audiences), fc.constant(material.audiences), fc.string({ maxLength: 10 })),
      sub: fc.oneof(fc.constant('auth0|fuzz'), fc.string({ maxLength: 20 })),
      exp: fc.oneof(fc.integer(), fc.constant(9_999_999_999), fc.string({ maxLength: 5 })),
      scope: fc.oneof(fc.constant('openid'), fc.string({ maxLength: 30 })),
    },
    { requiredKeys: [] },
  );
  const forged = fc.tuple(header, payload, fc.oneof(fc.constant(''), fc.base64String({ maxLength: 64 }).map((s) => s.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_')))).map(([h, p, sig]) => `${b64(h)}.${b64(p)}.${sig}`);
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...material.signed) },
    { weight: 3, arbitrary: forged },
    { weight: 1, arbitrary: fc.constantFrom(...material.signed).map((t) => `${t.slice(0, -4)}AAAA`) },
    { weight: 1, arbitrary: fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('a.b', 'a.b.c.d', '..', '.', 'e30.e30.', `${b64({ alg: 'RS256' })}.${'A'.repeat(20_000)}.x`)) },
  );
}
