import type { SessionRecord } from "../store.js";
import type { AckedWriter } from "./acked-writer.js";
import { redisCall } from "./redis-call.js";
import type { RedisClient } from "./redis-connection.js";

/**
 * Session records in Redis, one JSON string per session under its own hash tag, expiring with
 * the session. Writes go through the store's AckedWriter, so a resume never rests on a record
 * or a touch the replicas do not hold.
 */
export class SessionRecords {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly writer: AckedWriter,
  ) {}

  /** Stores the record with an expiry of its ttl. */
  async save(record: SessionRecord): Promise<void> {
    const key = this.key(record.sessionId);
    await this.writer.write(() => this.redis.set(key, JSON.stringify(record), "PX", record.ttlMs));
  }

  /** The record, or undefined when unknown or expired. */
  async load(sessionId: string): Promise<SessionRecord | undefined> {
    const json = await redisCall(() => this.redis.get(this.key(sessionId)));
    return json ? (JSON.parse(json) as SessionRecord) : undefined;
  }

  /** Pushes the expiry to now + ttl; false when it had already expired. */
  async touch(sessionId: string, ttlMs: number): Promise<boolean> {
    return (await this.writer.write(() => this.redis.pexpire(this.key(sessionId), ttlMs))) === 1;
  }

  /** Deletes the record. */
  async delete(sessionId: string): Promise<void> {
    await this.writer.write(() => this.redis.del(this.key(sessionId)));
  }

  private key(sessionId: string): string {
    return `${this.prefix}:session:{${sessionId}}`;
  }
}
