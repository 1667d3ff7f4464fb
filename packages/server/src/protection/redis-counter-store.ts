/**
 * Attack-protection counters in Redis, shared by every node: each operation is one Lua script, so the read, the
 * check against the limit and the write are atomic across nodes. The bucket script is the rate limiter's
 * (http/rate-limit/redis-store.ts) with a cost: -1 gives a token back. Redis's own clock keeps skewed nodes in step.
 */
import { Redis } from 'ioredis';
import { describe } from '../http/rate-limit/token-bucket.js';
import type { AttackCounterStore } from './counter-store.js';

const BUCKET_SCRIPT = `
local capacity = tonumber(ARGV[1])
local per_ms = tonumber(ARGV[2]) / 1000
local cost = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local data = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(data[1]) or capacity
local ts = tonumber(data[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - ts) * per_ms)
local allowed = 0
if tokens >= 1 then allowed = 1 end
if cost > 0 then
  if allowed == 1 then tokens = tokens - cost end
elseif data[1] then
  tokens = math.min(capacity, tokens - cost)
else
  return { 1, tostring(tokens), tostring(now) }
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((capacity - tokens) / per_ms) + 1000)
return { allowed, tostring(tokens), tostring(now) }
`;

const RESERVE_SCRIPT = `
local limit = tonumber(ARGV[1])
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count == limit then return { 0, count } end
if count < limit then count = count + 1 else count = limit end
redis.call('SET', KEYS[1], count, 'PX', ARGV[2])
return { 1, count }
`;

const REFUND_SCRIPT = `
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count > 0 then redis.call('DECR', KEYS[1]) end
return 0
`;

type BucketCommand = (key: string, capacity: number, perSecond: number, cost: number) => Promise<[number, string, string]>;
type ReserveCommand = (key: string, limit: number, ttlMs: number) => Promise<[number, number]>;
type RefundCommand = (key: string) => Promise<number>;
interface Commands {
  gatehouseAttackBucket: BucketCommand;
  gatehouseAttackReserve: ReserveCommand;
  gatehouseAttackRefund: RefundCommand;
}

export function createRedisCounterStore(url: string, prefix = 'gatehouse:ap:'): AttackCounterStore {
  // Connects on first use (a CLI command that never logs anyone in never dials Redis), and like the rate limiter
  // waits a second at most, so a slow Redis surfaces as an error the caller can fail open on, not a hung login.
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, commandTimeout: 1000, connectTimeout: 2000 });
  redis.defineCommand('gatehouseAttackBucket', { numberOfKeys: 1, lua: BUCKET_SCRIPT });
  redis.defineCommand('gatehouseAttackReserve', { numberOfKeys: 1, lua: RESERVE_SCRIPT });
  redis.defineCommand('gatehouseAttackRefund', { numberOfKeys: 1, lua: REFUND_SCRIPT });
  redis.on('error', () => undefined);
  const commands = redis as unknown as Commands;
  // While Redis is down and ioredis waits to reconnect, fail at once instead of queueing: every login would
  // otherwise wait out the reconnect delay (up to seconds) on each counter it touches.
  const available = () => {
    if (redis.status === 'reconnecting' || redis.status === 'close' || redis.status === 'end') throw new Error(`Redis is ${redis.status}`);
  };
  const bucket: BucketCommand = (...args) => {
    available();
    return commands.gatehouseAttackBucket(...args);
  };
  return {
    kind: 'redis',
    async reserve(key, limit, ttlMs) {
      available();
      const [allowed, count] = await commands.gatehouseAttackReserve(prefix + key, limit, Math.max(1, Math.ceil(ttlMs)));
      return { allowed: allowed === 1, count: Number(count) };
    },
    async refund(key) {
      available();
      await commands.gatehouseAttackRefund(prefix + key);
    },
    async reset(key) {
      available();
      return (await redis.del(prefix + key)) === 1;
    },
    async take(key, limit) {
      const [allowed, tokens, now] = await bucket(prefix + key, limit.capacity, limit.perSecond, 1);
      return describe(allowed === 1, Number(tokens), limit, Number(now));
    },
    async giveBack(key, limit) {
      await bucket(prefix + key, limit.capacity, limit.perSecond, -1);
    },
    async close() {
      if (redis.status === 'wait') redis.disconnect();
      else await redis.quit().catch(() => redis.disconnect());
    },
  };
}
