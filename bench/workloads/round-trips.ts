import { credentials } from "@grpc/grpc-js";
import type { Redis } from "ioredis";
import { LockServiceClient, type SessionResponse } from "../../gen/ts/turnstile/v1/turnstile.js";
import { type LatencySummary, summarize } from "../stats.js";

/** The floor under every lock operation on this machine: bare loopback round trips. */
export interface RoundTrips {
  /** PING from this process to Redis and back. */
  redisPing: LatencySummary;
  /**
   * A keepalive of a session holding nothing: this process → coordinator → Redis (one PEXPIRE of
   * the session record) → coordinator → this process.
   */
  coordinatorKeepAlive: LatencySummary;
}

/** Measures `count` sequential round trips of each kind. */
export async function measureRoundTrips(redis: Redis, address: string, count: number): Promise<RoundTrips> {
  const ping: number[] = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    await redis.ping();
    ping.push(performance.now() - t);
  }
  return { redisPing: summarize(ping), coordinatorKeepAlive: summarize(await keepAliveRtts(address, count)) };
}

async function keepAliveRtts(address: string, count: number): Promise<number[]> {
  const rpc = new LockServiceClient(address, credentials.createInsecure());
  const stream = rpc.session();
  let next: ((r: SessionResponse) => void) | undefined;
  stream.on("data", (r: SessionResponse) => next?.(r));
  stream.on("error", () => {});
  const reply = (send: () => void) =>
    new Promise<SessionResponse>((resolve) => {
      next = resolve;
      send();
    });
  try {
    const ttl = { seconds: 15n, nanos: 0 };
    const open = { clientName: "bench-rtt", ttl, resumeSessionId: "", resumeSecret: "", held: [] };
    await reply(() => stream.write({ kind: { $case: "open", open } }));
    const rtts: number[] = [];
    for (let seq = 1n; seq <= BigInt(count); seq++) {
      const t = performance.now();
      await reply(() => stream.write({ kind: { $case: "keepAlive", keepAlive: { seq } } }));
      rtts.push(performance.now() - t);
    }
    return rtts;
  } finally {
    stream.cancel();
    rpc.close();
  }
}
