import type { Claim, ReleaseOutcome } from "../../store.js";

/** How long and how many let-gos the journal keeps. */
export interface JournalLimits {
  /** Entries older than this are dropped (default 60 s). */
  windowMs: number;
  /** At most this many entries; the oldest go first (default 10,000). */
  maxEntries: number;
}

/** The defaults: a minute covers a switch window and the reconnect after it with room to spare. */
export const DEFAULT_JOURNAL_LIMITS: JournalLimits = { windowMs: 60_000, maxEntries: 10_000 };

/**
 * One let-go the replicas acknowledged: a final release of the hold with fencing token `token`, or a
 * cancel of the waiter `claim.requestId` (release.lua's `cancel`). Revokes are not kept: replayed as a
 * release they would skip the hold's lock-delay and its holder's notice (told first); a revoke lost in
 * the switch window leaves the hold to end with its lease, as before the journal.
 */
export type JournalEntry =
  | { kind: "release"; name: string; sessionId: string; owner: string; token: bigint; atMs: number }
  | { kind: "withdraw"; claim: Claim; how: "cancel"; atMs: number };

/** A hold as a release names it: with its fencing token when the caller knows it (the lock table does). */
export type HoldClaim = Omit<Claim, "requestId"> & { token?: bigint };

/**
 * The let-gos this coordinator had acknowledged lately, in memory only (no Redis call): bounded by
 * `windowMs` and `maxEntries`, pruned as entries are added. After a failover the old master may have
 * acknowledged some of them after the new master was promoted (the switch window); JournalReplay
 * runs them again there (docs/operations.md).
 */
export class ReleaseJournal {
  private entries: JournalEntry[] = [];
  private head = 0;

  constructor(
    private readonly limits: JournalLimits = DEFAULT_JOURNAL_LIMITS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Keeps a final release (hold count 0, token known): the hold with that token is gone for good. A
   * release that left counts is not kept: a replay drops every count, so re-entries stay exact.
   */
  released(hold: HoldClaim, outcome: ReleaseOutcome): void {
    const token = outcome.kind === "released" && outcome.holdCount === 0 && hold.token;
    if (typeof token !== "bigint") return;
    const { name, sessionId, owner } = hold;
    this.add({ kind: "release", name, sessionId, owner, token, atMs: this.now() });
  }

  /**
   * Keeps what release.lua acknowledged: a final release (as `released`) or a cancel. Not an `abandon`
   * (the stream broke): the client re-sends that request id when it resumes, and a replay must never
   * withdraw the re-sent request; after a cancel every re-send of the id is followed by a cancel.
   */
  letGo(claim: Claim & HoldClaim, how: "one" | "all" | "cancel" | "abandon", outcome: ReleaseOutcome): void {
    if (how === "one" || how === "all") this.released(claim, outcome);
    else if (how === "cancel") this.add({ kind: "withdraw", claim, how, atMs: this.now() });
  }

  /** The entries still within the window, oldest first. */
  recent(): JournalEntry[] {
    this.prune();
    return this.entries.slice(this.head);
  }

  /** How many entries are kept now. */
  get size(): number {
    this.prune();
    return this.entries.length - this.head;
  }

  private add(entry: JournalEntry): void {
    this.entries.push(entry);
    this.prune();
  }

  private prune(): void {
    const oldest = this.now() - this.limits.windowMs;
    const over = this.entries.length - this.head - this.limits.maxEntries;
    if (over > 0) this.head += over;
    while (this.head < this.entries.length && this.entries[this.head].atMs < oldest) this.head++;
    // Amortised O(1): the array is compacted once its dropped head outgrows what is kept.
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }
}
