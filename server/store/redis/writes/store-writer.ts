import type { RedisClient } from "../connection/redis-connection.js";
import type { LockScripts } from "../scripts/runner/lock-scripts.js";
import type { AckedWriter } from "./acked-writer.js";

/** Where one write goes: the client to send plain commands on, and the scripts defined on it. */
export interface WriteTarget {
  redis: RedisClient;
  scripts: LockScripts;
}

/**
 * How the Redis store sends its state changes: on the connection that owns `key` (one server, or
 * the master of the key's Cluster slot), with the floors of that master's epoch, confirmed by
 * WAIT on that same connection when replica acks are on.
 */
export interface StoreWriter {
  /** True when replicas confirm writes (scripts then return other coordinators' grants). */
  readonly confirming: boolean;
  /** Every master's epoch is known and no WAIT fell short since its last success. */
  readonly ready: boolean;
  /** The floors "F V" for a script on `key` sent now (throws unavailable while unknown). */
  floors(key: string): string;
  /**
   * Sends a state change on `key` through `send` and resolves once the replicas hold it; when the
   * WAIT falls short, `held` gets the reply (with the connection's socket) before the rejection.
   */
  write<T>(key: string, send: (on: WriteTarget) => Promise<T>, held?: (reply: T, socket: unknown) => void): Promise<T>;
  /** Learns the epochs before the store serves. */
  start(): Promise<void>;
  /** Stops timers. */
  close(): void;
}

/** A StoreWriter over one connection (a URL or the Sentinels' master): the AckedWriter as it is. */
export class SingleWriter implements StoreWriter {
  constructor(
    private readonly acked: AckedWriter,
    private readonly on: WriteTarget,
  ) {}

  get confirming(): boolean {
    return this.acked.confirming;
  }

  get ready(): boolean {
    return this.acked.ready;
  }

  floors(_key: string): string {
    return this.acked.floors();
  }

  write<T>(
    _key: string,
    send: (on: WriteTarget) => Promise<T>,
    held?: (reply: T, socket: unknown) => void,
  ): Promise<T> {
    return this.acked.write(() => send(this.on), held);
  }

  start(): Promise<void> {
    return this.acked.epoch.refresh();
  }

  close(): void {
    this.acked.close();
  }
}
