import { expect } from "chai";
import { handOffRedisHop, spreadRedisHop } from "../../bench/report/redis-hop.js";
import { counters, embedded, handOff, latency, onRedis, spread } from "./bench-result-fixtures.js";

describe("handOffRedisHop()", () => {
  it("is empty when the embedded row did not run", () => {
    expect(handOffRedisHop(onRedis, undefined)).to.deep.equal([]);
  });

  it("attributes the gap difference to the Redis hop when the embedded gap is smaller", () => {
    const target = { ms: 0.25, what: "1.25× the floor" };
    const text = handOffRedisHop(onRedis, embedded, target).join(" ");
    expect(text).to.include("0.200 ms p50 / 0.300 ms mean / 1.000 ms p99 at 3,000 hand-offs/s");
    expect(text).to.include("The Redis hop is 0.200 ms of the p50 gap (50%) and 0.200 ms of the mean (40%)");
    expect(text).to.include("1.50× as often");
    expect(text).to.include("Even with no Redis hop the mean gap is above the 0.250 ms target (1.25× the floor)");
    // Without a target (no anatomy, no floor) nothing is said about one.
    expect(handOffRedisHop(onRedis, embedded).join(" ")).not.to.include("target");
  });

  it("says the Redis hop is what misses the target when only the embedded gap meets it", () => {
    const fast = handOff("turnstile-embedded", latency(0.15, 0.2, 1), 4000, counters(0.2, 0.3));
    expect(handOffRedisHop(onRedis, fast, { ms: 0.25, what: "1.25× the floor" }).join(" ")).to.include(
      "Without the Redis hop the mean gap is within the 0.250 ms target",
    );
  });

  it("claims no cost of the Redis hop when the embedded gap is not smaller", () => {
    const slow = handOff("turnstile-embedded", latency(0.5, 0.6, 2), 1800, counters(0.2, 0.3));
    const text = handOffRedisHop(onRedis, slow).join(" ");
    expect(text).to.include("shows no measurable cost of the Redis hop");
    expect(text).not.to.include("The Redis hop is");
  });
});

describe("spreadRedisHop()", () => {
  const ts = spread("turnstile", 1000, counters(0.5, 0.8, 0.3));
  const e = spread("turnstile-embedded", 2000, counters(0.6, 1.0));

  it("compares CPU per cycle per process and cycles/s with Turnstile on Redis when redis-semaphore did not run", () => {
    const text = spreadRedisHop(ts, e).join(" ");
    expect(text).to.include("cost 800 µs of CPU (coordinator 300, clients 500, no Redis) against 1,600 µs on Redis");
    expect(text).to.include("(coordinator 500, clients 800, Redis 300)");
    expect(text).to.include("2,000 cycles/s, 2.00× Turnstile on Redis (1.60 cores' worth of CPU busy, against 1.60)");
    expect(text).not.to.include("redis-semaphore");
  });

  it("compares the embedded row with redis-semaphore when that row ran", () => {
    const short = spreadRedisHop(ts, e, spread("redis-semaphore", 4000, counters(undefined, 1, 0.4))).join(" ");
    expect(short).to.include("That is 0.50× redis-semaphore's cycles/s");
    expect(short).to.include("even a store that cost nothing would leave Turnstile short");
    const enough = spreadRedisHop(ts, e, spread("redis-semaphore", 1500, counters(undefined, 1, 0.4))).join(" ");
    expect(enough).to.include("the coordinator hop alone could match redis-semaphore");
  });
});
