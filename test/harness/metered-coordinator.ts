import { Redis } from "ioredis";
import { pino } from "pino";
import { TurnstileClient } from "../../client/index.js";
import { Coordinator } from "../../server/coordinator.js";
import { RedisStore } from "../../server/store/redis/redis-store.js";
import { type AsyncResourceCount, AsyncResourceMeter } from "./async-resource-meter.js";
import { GrpcFrameMeter, type GrpcTraffic } from "./grpc-frame-meter.js";
import { type DirectionCount, MeteredProxy } from "./metered-proxy.js";
import { RawSession } from "./raw-session.js";
import { startRedis, type TestRedis } from "./redis-server.js";
import { RespCommandMeter } from "./resp-command-meter.js";

/** The work one operation cost, counted on every connection it used and in the process. */
export interface WorkCount {
  /** Commands Redis ran: each EVALSHA and every redis.call inside the scripts (total_commands_processed). */
  redisCalls: number;
  /** EVALSHA (and EVAL) commands sent. */
  scriptsSent: number;
  /** Commands sent to Redis, scripts and plain commands alike (not the calls inside scripts): its round trips. */
  commandsSent: number;
  /** Coordinator → Redis and Redis → coordinator, both connections (commands and events). */
  toRedis: DirectionCount;
  fromRedis: DirectionCount;
  /** Client → coordinator and back, on the clients' HTTP/2 connection(s). */
  toCoordinator: GrpcTraffic;
  fromCoordinator: GrpcTraffic;
  /** Async resources created in this process (clients and coordinator): promises, nextTicks, immediates, timers… by type. */
  asyncResources: Record<string, number>;
  /** Where this count's async resources of `type` were created, most frequent sites first (for failure messages). */
  asyncOrigins(type: string): string;
}

const zeroTraffic = (): GrpcTraffic => ({ bytes: 0, frames: 0, messages: 0, messageBytes: 0 });

/**
 * A private redis-server, an in-process coordinator whose Redis connections pass through a metered
 * proxy, and clients whose gRPC connection passes through another one that reads the gRPC messages
 * in its HTTP/2 frames. `count(op)` runs one operation and returns the work it cost. For tests that
 * guard the cost of the message path by counting (never by timing).
 */
export class MeteredCoordinator {
  private readonly toCoordinator = zeroTraffic();
  private readonly fromCoordinator = zeroTraffic();
  private readonly asyncResources = new AsyncResourceMeter();
  private readonly clients: TurnstileClient[] = [];
  private readonly rawSessions: RawSession[] = [];
  private messagesSeen?: { target: number; resolve: () => void };

  private constructor(
    readonly redis: TestRedis,
    private readonly redisProxy: MeteredProxy,
    private readonly counter: Redis,
    readonly coordinator: Coordinator,
    private readonly grpcProxy: MeteredProxy,
    /** Commands sent through `redisProxy`, on every connection. */
    private readonly toRedis: { commands: number },
  ) {}

  /** Starts Redis, the proxies and the coordinator. */
  static async start(): Promise<MeteredCoordinator> {
    const redis = await startRedis();
    // Counted from the coordinator's first connection on, before `self` exists.
    const toRedis = { commands: 0 };
    const redisProxy = await MeteredProxy.start(`127.0.0.1:${redis.port}`, () => {
      const commands = new RespCommandMeter(toRedis);
      return (direction, chunk) => {
        if (direction === "up") commands.push(chunk);
      };
    });
    const coordinator = new Coordinator({
      store: new RedisStore({ url: `redis://${redisProxy.address}` }),
      log: pino({ level: process.env.TEST_LOG ?? "silent" }),
      listen: "127.0.0.1:0",
      shutdownGraceMs: 200,
    });
    const port = await coordinator.start();
    let self: MeteredCoordinator | undefined;
    const grpcProxy = await MeteredProxy.start(`127.0.0.1:${port}`, () => {
      const up = new GrpcFrameMeter(true, self!.toCoordinator);
      const down = new GrpcFrameMeter(false, self!.fromCoordinator);
      return (direction, chunk) => {
        if (direction === "up") return up.push(chunk);
        down.push(chunk);
        self!.checkMessagesSeen();
      };
    });
    self = new MeteredCoordinator(redis, redisProxy, new Redis(redis.url), coordinator, grpcProxy, toRedis);
    self.asyncResources.enable();
    return self;
  }

  /** A connected client through the metered gRPC proxy (a lease long enough that no keepalive falls in a count). */
  async client(): Promise<TurnstileClient> {
    const client = new TurnstileClient(this.grpcProxy.address, { ttlMs: 120_000 });
    this.clients.push(client);
    await client.connect();
    return client;
  }

  /** A bare session stream through the metered gRPC proxy, for counting single protocol messages (a keepalive). */
  rawSession(): RawSession {
    const session = new RawSession(this.grpcProxy.address);
    this.rawSessions.push(session);
    return session;
  }

  /** Resolves once `n` more gRPC messages than now have come from the coordinator (rejects after 5 s). */
  messagesFromCoordinator(n: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`timed out waiting for ${n} messages from the coordinator`)),
        5000,
      );
      this.messagesSeen = {
        target: this.fromCoordinator.messages + n,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      this.checkMessagesSeen();
    });
  }

  /**
   * Runs `op` and counts its work; `op` must resolve only once everything it caused has happened.
   * Waits first until the process has finished any other work, which would be counted with `op`'s.
   */
  async count(op: () => Promise<void>): Promise<WorkCount> {
    await this.asyncResources.quiet();
    const stats = async () => {
      const info = await this.counter.info("all");
      const field = (re: RegExp) => Number(re.exec(info)?.[1] ?? 0);
      return {
        processed: field(/^total_commands_processed:(\d+)/m),
        scripts: field(/^cmdstat_evalsha:calls=(\d+)/m) + field(/^cmdstat_eval:calls=(\d+)/m),
      };
    };
    const before = await stats();
    const commandsBefore = this.toRedis.commands;
    const up = { ...this.redisProxy.up };
    const down = { ...this.redisProxy.down };
    const toCoordinator = { ...this.toCoordinator };
    const fromCoordinator = { ...this.fromCoordinator };
    const counted = this.asyncResources.begin();
    let created: AsyncResourceCount;
    try {
      await op();
    } finally {
      created = counted.stop();
    }
    const after = await stats();
    return {
      // Less the INFO that read `before` (the second INFO is counted after it answers).
      redisCalls: after.processed - before.processed - 1,
      scriptsSent: after.scripts - before.scripts,
      commandsSent: this.toRedis.commands - commandsBefore,
      toRedis: minus(this.redisProxy.up, up),
      fromRedis: minus(this.redisProxy.down, down),
      toCoordinator: minus(this.toCoordinator, toCoordinator),
      fromCoordinator: minus(this.fromCoordinator, fromCoordinator),
      asyncResources: created.byType,
      asyncOrigins: (type) => created.origins(type),
    };
  }

  /** Closes the clients, the coordinator, the proxies and Redis. */
  async stop(): Promise<void> {
    this.asyncResources.disable();
    await Promise.all(this.clients.map((c) => c.close()));
    for (const s of this.rawSessions) s.close();
    await this.coordinator.stop();
    await this.grpcProxy.stop();
    await this.redisProxy.stop();
    this.counter.disconnect();
    await this.redis.stop();
  }

  private checkMessagesSeen(): void {
    const seen = this.messagesSeen;
    if (seen && this.fromCoordinator.messages >= seen.target) {
      this.messagesSeen = undefined;
      seen.resolve();
    }
  }
}

function minus<T extends object>(after: T, before: T): T {
  const out = {} as Record<string, number>;
  for (const key of Object.keys(after))
    out[key] = (after as Record<string, number>)[key] - (before as Record<string, number>)[key];
  return out as T;
}
