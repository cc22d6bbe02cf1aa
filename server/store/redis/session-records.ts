import type { SessionRecord } from "../store.js";
import { redisCall } from "./connection/redis-call.js";
import type { RedisClient } from "./connection/redis-connection.js";
import type { StoreWriter } from "./writes/store-writer.js";

/**
 * Session records in Redis, one JSON string per session under its own hash tag, expiring with
 * the session. Writes go through the store's StoreWriter (on Cluster, to the key's master), so a resume never rests on a record
 * or a touch the replicas do not hold.
 */
export class SessionRecords {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly writer: StoreWriter,
  ) {}

  /** Stores the record with an expiry of its ttl. */
  async save(record: SessionRecord): Promise<void> {
    const key = this.key(record.sessionId);
    await this.writer.write(key, (on) => on.redis.set(key, JSON.stringify(record), "PX", record.ttlMs));
  }

  /** The record, or undefined when unknown or expired. */
  async load(sessionId: string): Promise<SessionRecord | undefined> {
    const json = await redisCall(() => this.redis.get(this.key(sessionId)));
    return json ? (JSON.parse(json) as SessionRecord) : undefined;
  }

  /** Pushes the expiry to now + ttl; false when it had already expired. */
  async touch(sessionId: string, ttlMs: number): Promise<boolean> {
    const key = this.key(sessionId);
    return (await this.writer.write(key, (on) => on.redis.pexpire(key, ttlMs))) === 1;
  }

  /** Deletes the record. */
  async delete(sessionId: string): Promise<void> {
    const key = this.key(sessionId);
    await this.writer.write(key, (on) => on.redis.del(key));
  }

  /** The record's key, `<prefix>:session:{<id>}` (its own hash tag: on Cluster, a slot apart from the locks'). */
  key(sessionId: string): string {
    return `${this.prefix}:session:{${sessionId}}`;
  }
}
