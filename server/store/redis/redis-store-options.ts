import type { ConnectionSettings } from "./connection/redis-connection.js";
import type { JournalReplayReport } from "./journal/journal-replay.js";
import type { JournalLimits } from "./journal/release-journal.js";

/** Settings of the Redis store. */
export interface RedisStoreOptions extends ConnectionSettings {
  /** Key and channel prefix (default "turnstile"). */
  prefix?: string;
  /** How long a fencing counter outlives its lock's last grant (default 30 days). */
  fenceRetainMs?: number;
  /**
   * Replicas that must hold every state change before anything depends on it (WAIT): a count,
   * "majority" (of master and replicas the Sentinels know; needs a Sentinel target), or 0/absent: off.
   */
  replicaAcks?: number | "majority";
  /** How long one WAIT waits for the replicas (default 1000 ms); past it the write is unacknowledged. */
  replicaAckTimeoutMs?: number;
  /**
   * With Sentinels: how long (default 60 s) and how many (default 10,000) acknowledged releases and
   * cancels are kept to replay on a new master (journal/release-journal.ts, docs/operations.md).
   */
  releaseJournal?: Partial<JournalLimits>;
  /** Told after each replay of the journal on a new master (for the log). */
  onJournalReplay?: (report: JournalReplayReport) => void;
}
