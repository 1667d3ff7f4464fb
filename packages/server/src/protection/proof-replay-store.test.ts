/**
 * DPoP proof ids and brute-force counts live in separate stores on a node without Redis: the in-memory store drops
 * its oldest keys when full (100,000), and proofs are cheap to make (any key signs one), so sharing one store let a
 * flood of proofs push a user's count of wrong passwords out, and with it the block it was leading to.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../test-support/server.js';

describe('DPoP proof ids beside attack-protection counters (no Redis)', () => {
  let test: TestServer;
  beforeAll(async () => {
    test = await startTestServer();
  });
  afterAll(async () => {
    await test?.close();
  });

  it('a flood of 100,001 proof ids leaves a brute-force count where it was', async () => {
    const { attackProtection, proofReplay } = test.server.services;
    const key = 'brute-force:test-tenant:someone@example.com';
    for (let i = 1; i <= 3; i++) expect(await attackProtection.counters.reserve(key, 10, 3_600_000)).toEqual({ allowed: true, count: i });
    for (let i = 0; i <= 100_000; i++) await proofReplay.reserve(`dpop:test-tenant:jkt:${i}`, 1, 120_000);
    expect(await attackProtection.counters.reserve(key, 10, 3_600_000)).toEqual({ allowed: true, count: 4 });
  });
});
