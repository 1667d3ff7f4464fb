/**
 * verifyDpopProof itself, with a real sealer and the memory counter store: what the per-header cache must never
 * change. A header seen before still needs its own proof's signature; a refused header is refused again; the
 * claims are still checked one by one; `htu` still compares scheme, host and path only. (Over HTTP, with every
 * refusal's answer: auth-api/dpop.test.ts.)
 */
import { createPrivateKey, randomBytes, randomUUID, sign as nodeSign, type JsonWebKey } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type GenerateKeyPairResult } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryCounterStore } from '../protection/memory-counter-store.js';
import { currentNonce, verifyDpopProof } from './dpop.js';
import { createSealer } from './sealing.js';
import { jwkThumbprint } from '../test-support/dpop.js';

const TENANT = 'ten_dpop_unit';
const URL_ = 'https://id.example.com/oauth/token';

describe('verifyDpopProof', () => {
  const sealer = createSealer(randomBytes(32));
  const counters = createMemoryCounterStore();
  const deps = { sealer, counters };
  let keys: GenerateKeyPairResult;
  let other: GenerateKeyPairResult;

  const claims = (extra: Record<string, unknown> = {}) => ({ htm: 'POST', htu: URL_, jti: randomUUID(), iat: Math.floor(Date.now() / 1000), nonce: currentNonce(sealer, TENANT), ...extra });
  const sign = async (signer: GenerateKeyPairResult, headerKeys: GenerateKeyPairResult, body: Record<string, unknown>) =>
    new SignJWT(body).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(headerKeys.publicKey) }).sign(signer.privateKey);
  const check = (header: string, url = URL_) => verifyDpopProof(deps, TENANT, { header, method: 'POST', url });

  beforeAll(async () => {
    keys = await generateKeyPair('ES256', { extractable: true });
    other = await generateKeyPair('ES256', { extractable: true });
  });
  afterAll(() => counters.close());

  it('takes a proof, and gives the thumbprint of its key', async () => {
    expect(await check(await sign(keys, keys, claims()))).toEqual({ jkt: await jwkThumbprint(keys) });
  });

  it('checks the signature of every proof, its header known or not', async () => {
    const good = await sign(keys, keys, claims());
    await check(good);
    // The same header bytes (now known), a signature by another key.
    const forged = await sign(other, keys, claims());
    expect(forged.split('.')[0]).toBe(good.split('.')[0]);
    await expect(check(forged)).rejects.toMatchObject({ reason: 'invalid', message: expect.stringMatching(/signature/) });
    // Claims swapped under a known header and a valid signature of other claims.
    const [header, , signature] = (await sign(keys, keys, claims())).split('.');
    const swapped = `${header}.${Buffer.from(JSON.stringify(claims())).toString('base64url')}.${signature}`;
    await expect(check(swapped)).rejects.toMatchObject({ message: expect.stringMatching(/signature/) });
  });

  it('refuses a bad header every time it comes, and a token that is not three parts', async () => {
    const privateJwk = await new SignJWT(claims()).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(keys.privateKey) }).sign(keys.privateKey);
    for (let i = 0; i < 2; i++) await expect(check(privateJwk)).rejects.toMatchObject({ message: expect.stringMatching(/public jwk/) });
    const wrongTyp = await new SignJWT(claims()).setProtectedHeader({ alg: 'ES256', typ: 'JWT', jwk: await exportJWK(keys.publicKey) }).sign(keys.privateKey);
    for (let i = 0; i < 2; i++) await expect(check(wrongTyp)).rejects.toMatchObject({ message: expect.stringMatching(/typ/) });
    const good = await sign(keys, keys, claims());
    await expect(check(`${good}.extra`)).rejects.toMatchObject({ message: 'The DPoP proof is not a JWT' });
    await expect(check(`@@@.${good.split('.').slice(1).join('.')}`)).rejects.toMatchObject({ message: 'The DPoP proof is not a JWT' });
    const arrayHeader = `${Buffer.from('[1]').toString('base64url')}.${good.split('.').slice(1).join('.')}`;
    await expect(check(arrayHeader)).rejects.toMatchObject({ message: 'The DPoP proof is not a JWT' });
  });

  it('checks the claims under a known header: an array payload, htm, iat, nonce, jti replay', async () => {
    await check(await sign(keys, keys, claims()));
    // jose signs only objects: an array payload is signed by hand, under the known header.
    const [header] = (await sign(keys, keys, claims())).split('.');
    const payload = Buffer.from('[1,2]').toString('base64url');
    const privateKey = createPrivateKey({ key: (await exportJWK(keys.privateKey)) as JsonWebKey, format: 'jwk' });
    const signature = nodeSign('sha256', Buffer.from(`${header}.${payload}`), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url');
    await expect(check(`${header}.${payload}.${signature}`)).rejects.toMatchObject({ message: expect.stringMatching(/not a JSON object/) });
    await expect(check(await sign(keys, keys, { ...claims(), htm: 'GET' }))).rejects.toMatchObject({ message: expect.stringMatching(/htm/) });
    await expect(check(await sign(keys, keys, claims({ iat: Math.floor(Date.now() / 1000) - 600 })))).rejects.toMatchObject({ message: expect.stringMatching(/iat/) });
    await expect(check(await sign(keys, keys, claims({ nonce: 'stale' })))).rejects.toMatchObject({ reason: 'nonce' });
    const once = await sign(keys, keys, claims());
    await check(once);
    await expect(check(once)).rejects.toMatchObject({ message: expect.stringMatching(/used before/) });
  });

  it('compares htu by scheme, host and path: the exact string, a query or fragment pass; another host or scheme does not', async () => {
    await check(await sign(keys, keys, claims()));
    await check(await sign(keys, keys, claims({ htu: `${URL_}?a=1#f` })));
    await check(await sign(keys, keys, claims({ htu: 'https://ID.example.com/oauth/token' })));
    await expect(check(await sign(keys, keys, claims({ htu: 'https://evil.example.com/oauth/token' })))).rejects.toMatchObject({ message: expect.stringMatching(/htu/) });
    await expect(check(await sign(keys, keys, claims({ htu: 'http://id.example.com/oauth/token' })))).rejects.toMatchObject({ message: expect.stringMatching(/htu/) });
    await expect(check(await sign(keys, keys, claims({ htu: 'not a url' })))).rejects.toMatchObject({ message: expect.stringMatching(/htu/) });
  });
});
