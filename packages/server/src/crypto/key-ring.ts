/**
 * The signing keys of every tenant, as the rest of the server uses them: the key that signs now, and the
 * JWKS that verifiers fetch. Both are cached briefly in memory; rotation done by another process (the CLI,
 * another node) is picked up within KEY_CACHE_MS, which is safe because the next key was published long before.
 */
import { createHash, createPrivateKey, type JsonWebKey as NodeJsonWebKey, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.js';
import {
  insertInitialKeys,
  listPublishedKeys,
  rotateKeys,
  type NewSigningKey,
  type SigningKeyRow,
} from '../store/signing-keys.js';
import type { Sealer } from './sealing.js';

export const SIGNING_ALG = 'RS256';
const KEY_CACHE_MS = 30_000;

export interface SigningKey {
  kid: string;
  alg: string;
  /** A node:crypto KeyObject: signs on libuv's thread pool (crypto.sign with a callback), and jose accepts it too. */
  privateKey: KeyObject;
  /** `base64url({alg, kid, typ: "at+jwt"}).`: encoded once per key, as every access token it signs shares it. */
  accessTokenHeader: string;
}

/** A published RSA public key, as it appears in the JWKS. */
export interface PublicSigningJwk {
  kty: string;
  kid: string;
  alg: string;
  use: string;
  n: string;
  e: string;
}

export interface JsonWebKeySet {
  keys: PublicSigningJwk[];
}

interface TenantKeys {
  loadedAt: number;
  signing: SigningKey;
  jwks: JsonWebKeySet;
  /** The JWKS as served, made once per load: the hottest public GET sends these bytes as they are. */
  document: JwksDocument;
  /** Every published key, current first (for SAML metadata, which lists a certificate per key). */
  published: PublishedSigningKey[];
}

/** The JWKS response body and its strong ETag. */
export interface JwksDocument {
  body: string;
  etag: string;
}

/** The published members of a public JWK, in the order the JWKS response lists them (nothing else leaks). */
const JWK_MEMBERS = ['kty', 'kid', 'alg', 'use', 'n', 'e'] as const;

function jwksDocument(jwks: JsonWebKeySet): JwksDocument {
  const keys = jwks.keys.map((key) => Object.fromEntries(JWK_MEMBERS.map((m) => [m, (key as unknown as Record<string, unknown>)[m]])));
  const body = JSON.stringify({ keys });
  return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

export interface PublishedSigningKey {
  status: string;
  key: SigningKey;
}

function sealContext(tenantId: string, kid: string): string {
  return `signing_key:${tenantId}:${kid}`;
}

/** A new RSA 2048 key for `tenantId`, its private half sealed. */
export async function generateSigningKey(tenantId: string, sealer: Sealer): Promise<NewSigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALG, { modulusLength: 2048, extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const privateJwk = await exportJWK(privateKey);
  return {
    kid,
    tenant_id: tenantId,
    alg: SIGNING_ALG,
    public_jwk: JSON.stringify({ ...publicJwk, kid, alg: SIGNING_ALG, use: 'sig' }),
    private_key_sealed: sealer.seal(JSON.stringify(privateJwk), sealContext(tenantId, kid)),
  };
}

export class KeyRing {
  readonly #cache = new Map<string, TenantKeys>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly sealer: Sealer,
  ) {}

  /** Creates the tenant's first current and next keys if it has none. */
  async ensureKeys(tenantId: string): Promise<void> {
    const current = await generateSigningKey(tenantId, this.sealer);
    const next = await generateSigningKey(tenantId, this.sealer);
    if (await insertInitialKeys(this.db, current, next)) this.#cache.delete(tenantId);
  }

  /** Promotes next to current and publishes a fresh next key. Returns the kid that signs now. */
  async rotate(tenantId: string): Promise<string> {
    const kid = await rotateKeys(this.db, await generateSigningKey(tenantId, this.sealer));
    this.#cache.delete(tenantId);
    return kid;
  }

  async signingKey(tenantId: string): Promise<SigningKey> {
    return (await this.#load(tenantId)).signing;
  }

  async jwks(tenantId: string): Promise<JsonWebKeySet> {
    return (await this.#load(tenantId)).jwks;
  }

  /** The JWKS as `GET /.well-known/jwks.json` sends it, with its ETag. */
  async document(tenantId: string): Promise<JwksDocument> {
    return (await this.#load(tenantId)).document;
  }

  /** The published keys (current, next, previous), current first. */
  async publishedKeys(tenantId: string): Promise<PublishedSigningKey[]> {
    return (await this.#load(tenantId)).published;
  }

  async #load(tenantId: string): Promise<TenantKeys> {
    const cached = this.#cache.get(tenantId);
    if (cached && Date.now() - cached.loadedAt < KEY_CACHE_MS) return cached;
    const rows = await listPublishedKeys(this.db, tenantId);
    const current = rows.find((r) => r.status === 'current');
    if (!current) throw new Error(`tenant ${tenantId} has no current signing key`);
    const published = await Promise.all(rows.map(async (r) => ({ status: r.status, key: await this.#importPrivate(r) })));
    const jwks = { keys: rows.map((r) => JSON.parse(r.public_jwk) as PublicSigningJwk) };
    const loaded: TenantKeys = {
      loadedAt: Date.now(),
      signing: published.find((p) => p.status === 'current')!.key,
      jwks,
      document: jwksDocument(jwks),
      published,
    };
    this.#cache.set(tenantId, loaded);
    return loaded;
  }

  async #importPrivate(row: SigningKeyRow): Promise<SigningKey> {
    const jwk = JSON.parse(this.sealer.unseal(row.private_key_sealed, sealContext(row.tenant_id, row.kid))) as JWK;
    return {
      kid: row.kid,
      alg: row.alg,
      privateKey: createPrivateKey({ key: jwk as NodeJsonWebKey, format: 'jwk' }),
      accessTokenHeader: `${Buffer.from(JSON.stringify({ alg: row.alg, kid: row.kid, typ: 'at+jwt' })).toString('base64url')}.`,
    };
  }
}
