import { StoreUnacknowledgedError } from "../../store-unacknowledged-error.js";
import type { LockKeyCache } from "../records/lock-key-cache.js";
import type { LockScriptArgs } from "../scripts/lock-script-args.js";
import type { ScriptArg, ScriptName } from "../scripts/lock-scripts.js";
import { ScriptCode } from "../scripts/script-code.js";
import { DEFAULT_JOURNAL_LIMITS, type JournalEntry, type JournalLimits, ReleaseJournal } from "./release-journal.js";

/**
 * What one replay did, for the log: entries and scripts sent, holds dropped and cancels that withdrew (as
 * far as acknowledged), scripts whose WAIT fell short (they ran; their grants go out with a later
 * WAIT) or that failed, and how long it took.
 */
export interface JournalReplayReport {
  epoch: number;
  entries: number;
  scripts: number;
  dropped: number;
  withdrawn: number;
  unacknowledged: number;
  failed: number;
  ms: number;
}

/** How the Redis store runs a script: acknowledged; when the WAIT falls short, `grants` of the reply are held back. */
export type ScriptSend = (
  script: ScriptName,
  keys: readonly string[],
  args: ScriptArg[],
  lock?: string,
  grants?: (reply: unknown[]) => unknown,
) => Promise<unknown>;

/** The store's side of a replay: the scripts' arguments, the send, grant delivery. */
export interface ReplayTarget {
  argv: LockScriptArgs;
  lockKeys: LockKeyCache;
  send: ScriptSend;
  /** Hands on the grants of an acknowledged reply. */
  deliver(name: string, grants: string[]): void;
}

type Release = Extract<JournalEntry, { kind: "release" }>;

/**
 * Runs the journal again on each new master, before any other write of this coordinator goes there:
 * a release the old master acknowledged in its switch window (docs/operations.md) is lost with it and
 * would leave the lock held until its lease ends. Releases go by token, one release-token.lua per lock;
 * cancels as they were (release.lua is idempotent per waiter). Every script is sent in the turn in
 * which the epoch was learnt, so it is first on the new connection: a re-entry sent later cannot reach
 * a hold the replay drops.
 */
export class JournalReplay {
  /** What is replayed: every acknowledged final release, revoke and cancel of the last window. */
  readonly journal: ReleaseJournal;
  /** The epoch whose master has every entry: the first one learnt, then each fully replayed. */
  private replayedEpoch?: number;
  private readonly onReplay?: (report: JournalReplayReport) => void;

  constructor(
    options: { releaseJournal?: Partial<JournalLimits>; onJournalReplay?: (report: JournalReplayReport) => void },
    private readonly target: ReplayTarget,
  ) {
    this.journal = new ReleaseJournal({ ...DEFAULT_JOURNAL_LIMITS, ...options.releaseJournal });
    this.onReplay = options.onJournalReplay;
  }

  /**
   * The command connection learnt the epoch of its master (writes can run there now): on a master of
   * another epoch, sends the journal's scripts at once (synchronously) and reports when they answered.
   */
  masterLearned(epoch: number): void {
    if (this.replayedEpoch === undefined) this.replayedEpoch = epoch;
    if (epoch === this.replayedEpoch) return;
    const entries = this.journal.recent();
    const started = performance.now();
    const sent = this.send(entries);
    void Promise.allSettled(sent).then((results) => {
      const codes = results.map((r) => (r.status === "fulfilled" ? r.value : undefined));
      const unacked = results.filter((r) => r.status === "rejected" && r.reason instanceof StoreUnacknowledgedError);
      const failed = results.filter((r) => r.status === "rejected").length - unacked.length;
      // Unacknowledged scripts still ran on this master; anything else may not have: replay again next time.
      if (failed === 0) this.replayedEpoch = epoch;
      this.onReplay?.({
        epoch,
        entries: entries.length,
        scripts: sent.length,
        dropped: codes.reduce<number>((sum, c) => sum + (c?.dropped ?? 0), 0),
        withdrawn: codes.filter((c) => c?.code === ScriptCode.Withdrawn || c?.code === ScriptCode.GrantReleased).length,
        unacknowledged: unacked.length,
        failed,
        ms: Math.round(performance.now() - started),
      });
    });
  }

  /** Sends one release-token.lua per lock and one release.lua per cancel, all in this turn. */
  private send(entries: JournalEntry[]): Promise<{ code: number; dropped: number }>[] {
    const { argv, lockKeys, send, deliver } = this.target;
    const releases = new Map<string, Release[]>();
    const sent: Promise<{ code: number; dropped: number }>[] = [];
    for (const e of entries) {
      const same = e.kind === "release" ? releases.get(e.name) : undefined;
      if (e.kind === "release") same ? same.push(e) : releases.set(e.name, [e]);
      else {
        const { name } = e.claim;
        const reply = send("release", lockKeys.of(name).keys, argv.release(e.claim, e.how), name, (r) => r[2]);
        sent.push(
          reply.then((r) => {
            const [code, , grants] = r as [number, number, string[]];
            deliver(name, grants);
            return { code, dropped: 0 };
          }),
        );
      }
    }
    for (const [name, holds] of releases) {
      const reply = send("release-token", lockKeys.of(name).keys, argv.releaseTokens(name, holds), name, (r) => r[2]);
      sent.push(
        reply.then((r) => {
          const [code, dropped, grants] = r as [number, number, string[]];
          deliver(name, grants);
          return { code, dropped };
        }),
      );
    }
    return sent;
  }
}
