import { StoreUnacknowledgedError } from "../../store-unacknowledged-error.js";
import { releaseGrants, sendRelease, translateRelease } from "../scripts/release.js";
import { runReleaseToken } from "../scripts/release-token.js";
import type { ScriptContext } from "../scripts/script-context.js";
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

/** The store's side of a replay: what its scripts share (scripts/script-context.ts), grant delivery. */
export interface ReplayTarget {
  context: ScriptContext;
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
      const answers = results.map((r) => (r.status === "fulfilled" ? r.value : undefined));
      const unacked = results.filter((r) => r.status === "rejected" && r.reason instanceof StoreUnacknowledgedError);
      const failed = results.filter((r) => r.status === "rejected").length - unacked.length;
      // Unacknowledged scripts still ran on this master; anything else may not have: replay again next time.
      if (failed === 0) this.replayedEpoch = epoch;
      this.onReplay?.({
        epoch,
        entries: entries.length,
        scripts: sent.length,
        dropped: answers.reduce<number>((sum, a) => sum + (a?.dropped ?? 0), 0),
        withdrawn: answers.filter((a) => a?.withdrew).length,
        unacknowledged: unacked.length,
        failed,
        ms: Math.round(performance.now() - started),
      });
    });
  }

  /** Sends one release-token.lua per lock and one release.lua per cancel, all in this turn. */
  private send(entries: JournalEntry[]): Promise<{ withdrew: boolean; dropped: number }>[] {
    const { context, deliver } = this.target;
    const releases = new Map<string, Release[]>();
    const sent: Promise<{ withdrew: boolean; dropped: number }>[] = [];
    for (const e of entries) {
      const same = e.kind === "release" ? releases.get(e.name) : undefined;
      if (e.kind === "release") same ? same.push(e) : releases.set(e.name, [e]);
      else {
        const { name } = e.claim;
        sent.push(
          sendRelease(context, e.claim, e.how).then((reply) => {
            deliver(name, releaseGrants(reply as unknown[]));
            const { kind } = translateRelease(reply as unknown[]);
            return { withdrew: kind === "withdrawn" || kind === "grant-released", dropped: 0 };
          }),
        );
      }
    }
    for (const [name, holds] of releases) {
      sent.push(
        runReleaseToken(context, name, holds).then(({ dropped, grants }) => {
          deliver(name, grants);
          return { withdrew: false, dropped };
        }),
      );
    }
    return sent;
  }
}
