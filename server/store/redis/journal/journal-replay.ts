import { StoreUnacknowledgedError } from "../../store-unacknowledged-error.js";
import { StoreUnavailableError } from "../../store-unavailable-error.js";
import type { LockKeyCache } from "../records/lock-key-cache.js";
import type { LockScriptArgs } from "../scripts/lock-script-args.js";
import type { ScriptArg, ScriptName } from "../scripts/lock-scripts.js";
import { ScriptCode } from "../scripts/script-code.js";
import { DEFAULT_JOURNAL_LIMITS, type JournalEntry, type JournalLimits, ReleaseJournal } from "./release-journal.js";

/** What one replay did, for the log: entries sent, holds dropped, waiters withdrawn, how long it took. */
export interface JournalReplayReport {
  epoch: number;
  entries: number;
  dropped: number;
  withdrawn: number;
  failed: number;
  ms: number;
}

/**
 * How the Redis store runs a script: acknowledged, and when the WAIT falls short the grants `grants`
 * picks from the reply are held back (for the lock `lock`).
 */
export type ScriptSend = (
  script: ScriptName,
  keys: readonly string[],
  args: ScriptArg[],
  lock?: string,
  grants?: (reply: unknown[]) => unknown,
) => Promise<unknown>;

/** The store's side of a replay: the scripts' arguments, an ungated send, grant delivery, the floors. */
export interface ReplayTarget {
  argv: LockScriptArgs;
  lockKeys: LockKeyCache;
  send: ScriptSend;
  /** Hands on the grants of an acknowledged reply. */
  deliver(name: string, grants: string[]): void;
  /** The floors "F V" a script on `key` gets now (throws unavailable while unknown). */
  floors(key: string): string;
}

/** A replay in progress: writes wait for it, then go out if the master is still the one it ran on. */
export interface ReplayGate {
  done: Promise<void>;
  after<T>(key: string, send: () => Promise<T>): Promise<T>;
}

/**
 * Runs the journal again on each new master, at once, before any other write of this coordinator
 * goes there: a release the old master acknowledged in its switch window (docs/operations.md) is
 * lost with it, and would leave the lock held until its lease ends. Releases are replayed by token
 * (release-token.lua), withdrawals as they were (release.lua is idempotent per waiter). Writes
 * arriving meanwhile wait for the replay (`gate`), so a re-entry cannot reach a hold about to be dropped.
 */
export class JournalReplay {
  /** The epoch whose master has every entry: the first one learned, then each fully replayed. */
  private replayedEpoch?: number;
  /** Set while a replay runs. */
  gate?: ReplayGate;
  /** What is replayed: every acknowledged final release, revoke and withdrawal of the last window. */
  readonly journal: ReleaseJournal;
  private readonly onReplay?: (report: JournalReplayReport) => void;

  constructor(
    options: { releaseJournal?: Partial<JournalLimits>; onJournalReplay?: (report: JournalReplayReport) => void },
    private readonly target: ReplayTarget,
  ) {
    this.journal = new ReleaseJournal({ ...DEFAULT_JOURNAL_LIMITS, ...options.releaseJournal });
    this.onReplay = options.onJournalReplay;
  }

  /** The command connection learnt the epoch of its master: replays the journal there if it is a new one. */
  masterLearned(epoch: number): void {
    if (this.replayedEpoch === undefined) this.replayedEpoch = epoch;
    if (epoch === this.replayedEpoch) return;
    const entries = this.journal.recent();
    if (entries.length === 0) {
      this.replayedEpoch = epoch;
      return;
    }
    const floors = this.target.floors("");
    const done = this.replay(epoch, entries).finally(() => {
      if (this.gate?.done === done) this.gate = undefined;
    });
    // A write waiting here had its arguments built with these floors: on another master they are stale.
    const after = <T>(key: string, send: () => Promise<T>) =>
      done.then(() => {
        if (this.target.floors(key) !== floors)
          throw new StoreUnavailableError("redis: the master changed while this write waited: retry", {
            outcome: "unchanged",
          });
        return send();
      });
    this.gate = { done, after };
  }

  private async replay(epoch: number, entries: JournalEntry[]): Promise<void> {
    const started = performance.now();
    const results = await Promise.allSettled(entries.map((e) => this.replayOne(e)));
    const codes = results.map((r) => (r.status === "fulfilled" ? r.value : undefined));
    // Unacknowledged still ran on this master (its grants go out with a later WAIT); anything else may not have.
    const failed = results.filter((r) => r.status === "rejected" && !(r.reason instanceof StoreUnacknowledgedError));
    if (failed.length === 0) this.replayedEpoch = epoch;
    this.onReplay?.({
      epoch,
      entries: entries.length,
      dropped: codes.filter((c) => c === ScriptCode.TokenDropped).length,
      withdrawn: codes.filter((c) => c === ScriptCode.Withdrawn || c === ScriptCode.GrantReleased).length,
      failed: failed.length,
      ms: Math.round(performance.now() - started),
    });
  }

  /** Sends one entry and hands on what it freed; resolves with the script's code. */
  private async replayOne(e: JournalEntry): Promise<number> {
    const target = this.target;
    const { argv, lockKeys } = target;
    if (e.kind === "release") {
      const args = argv.releaseToken(e, e.token);
      const reply = (await target.send("release-token", lockKeys.of(e.name).keys, args, e.name, (r) => r[1])) as [
        number,
        string[],
      ];
      target.deliver(e.name, reply[1]);
      return reply[0];
    }
    const args = argv.release(e.claim, e.how);
    const keys = lockKeys.of(e.claim.name).keys;
    const reply = (await target.send("release", keys, args, e.claim.name, (r) => r[2])) as [number, number, string[]];
    target.deliver(e.claim.name, reply[2]);
    return reply[0];
  }
}
