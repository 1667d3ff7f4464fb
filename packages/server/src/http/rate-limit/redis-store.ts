/**
 * Bucket state in Redis, shared by every node. One Lua script reads, refills, takes and writes atomically,
 * using Redis's own clock so that nodes with skewed clocks still agree.
 */
import { Redis } from 'ioredis';
import type { RateLimitStore } from './store.js';
import { describe } from './token-bucket.js';

const TAKE_SCRIPT = `
local capacity = tonumber(ARGV[1])
local per_ms = tonumber(ARGV[2]) / 1000
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local data = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(data[1]) or capacity
local ts = tonumber(data[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - ts) * per_ms)
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((capacity - tokens) / per_ms) + 1000)
return { allowed, tostring(tokens), tostring(now) }
`;

export function createRedisStore(url: string, prefix = 'gatehouse:rl:'): RateLimitStore {
  // Commands wait through one reconnect at most and never longer than a second: a slow or absent Redis
  // makes the limiter fail open (plugin.ts), not requests hang.
  const redis = new Redis(url, { maxRetriesPerRequest: 1, commandTimeout: 1000, connectTimeout: 2000 });
  redis.defineCommand('gatehouseTake', { numberOfKeys: 1, lua: TAKE_SCRIPT });
  // Connection errors surface on each take(); the plugin decides what to do with them.
  redis.on('error', () => undefined);
  const run = (redis as unknown as { gatehouseTake(key: string, capacity: number, perSecond: number): Promise<[number, string, string]> })
    .gatehouseTake.bind(redis);
  return {
    kind: 'redis',
    async take(key, limit) {
      const [allowed, tokens, now] = await run(prefix + key, limit.capacity, limit.perSecond);
      return describe(allowed === 1, Number(tokens), limit, Number(now));
    },
    async ping() {
      await redis.ping();
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
