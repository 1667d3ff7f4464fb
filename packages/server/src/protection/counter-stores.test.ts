import { describe, it } from 'vitest';
import { redisAvailable, REDIS_URL } from '../test-support/services.js';
import { runAttackCounterStoreContract } from './counter-store-contract.js';
import { createMemoryCounterStore } from './memory-counter-store.js';
import { createRedisCounterStore } from './redis-counter-store.js';

runAttackCounterStoreContract('memory', () => createMemoryCounterStore());

if (await redisAvailable()) {
  runAttackCounterStoreContract('Redis', () => createRedisCounterStore(REDIS_URL, `gatehouse:test:${process.pid}:ap:`));
} else {
  describe('attack counter store contract: Redis', () => {
    it.skip('Redis unreachable: skipped (see the notice above)', () => undefined);
  });
}
