import type { Redis } from "ioredis";

/**
 * Moves time forward on a Redis store by `ARGV[1]` ms without waiting: every time the store keeps
 * under the key prefix `ARGV[2]` moves that far into the past, which is what the scripts see when
 * their clock (`TIME`) has moved that far ahead. The times are those docs/data-model.md lists: the
 * scores of `…:holders` (lease deadlines and the member `delay`'s end) and `…:leases` (waiter lease
 * deadlines), the `…:data` fields `delay` (the lock-delay's end), `a:` and `q:` (granted and first
 * queued at), and every key's expiry (a resting delayed lock, the fence and version counters, the
 * session records). `…:queue` is scored by arrival, not time, and is left alone.
 */
const SHIFT_SCRIPT = `
local ms = tonumber(ARGV[1])
local function shifted(value) return string.format('%d', tonumber(value) - ms) end
for _, key in ipairs(redis.call('KEYS', ARGV[2] .. ':*')) do
  local ttl = redis.call('PTTL', key)
  if key:sub(-8) == ':holders' or key:sub(-7) == ':leases' then
    local all = redis.call('ZRANGE', key, 0, -1, 'WITHSCORES')
    for i = 1, #all, 2 do redis.call('ZADD', key, shifted(all[i + 1]), all[i]) end
  elseif key:sub(-5) == ':data' then
    local all = redis.call('HGETALL', key)
    for i = 1, #all, 2 do
      local field, kind = all[i], all[i]:sub(1, 2)
      if field == 'delay' or kind == 'a:' or kind == 'q:' then redis.call('HSET', key, field, shifted(all[i + 1])) end
    end
  end
  if ttl > ms then redis.call('PEXPIRE', key, ttl - ms) elseif ttl > 0 then redis.call('DEL', key) end
end
return 0
`;

/**
 * The one clock a memory store and a Redis store share in a differential run. The Redis store runs on
 * Redis's `TIME`; the memory store reads `read`, which is Redis's `TIME` as sampled by `sync` (the
 * runner syncs before every step) plus every `advance` so far. `advance(ms)` moves both at once: the
 * memory store's offset grows, and the Redis store's stored times move back by the same amount.
 */
export class SharedClock {
  private redisNowMs = 0;
  private advancedMs = 0;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  /** The memory store's clock (MemoryStoreOptions.clock). */
  readonly read = (): number => this.redisNowMs + this.advancedMs;

  /** Samples Redis's clock for the memory store's next operations. */
  async sync(): Promise<void> {
    const [seconds, micros] = await this.redis.time();
    this.redisNowMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }

  /** Moves both stores' clocks `ms` forward. */
  async advance(ms: number): Promise<void> {
    await this.redis.eval(SHIFT_SCRIPT, 0, ms, this.prefix);
    this.advancedMs += ms;
  }
}
