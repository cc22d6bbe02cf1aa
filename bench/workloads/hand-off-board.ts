interface Waiter {
  ready: () => boolean;
  resolve: () => void;
}

/**
 * Who holds the lock and who has asked for it again, for the hand-off workload's two rules: a
 * contender re-enters only once another contender has taken the lock, and a holder releases only
 * once the previous holder's new acquire is on its way, so every release hands the lock to a
 * contender that was already waiting (none can barge in between).
 */
export class HandOffBoard {
  /** Entries into the lock so far. */
  entries = 0;
  #holder: number | undefined;
  /** Per contender: the entry count when it last issued an acquire. */
  readonly #issuedAt: number[];
  #waiters: Waiter[] = [];
  #closed = false;

  constructor(contenders: number) {
    this.#issuedAt = new Array<number>(contenders).fill(-1);
  }

  /** Contender `who` has just issued an acquire. */
  issued(who: number): void {
    this.#issuedAt[who] = this.entries;
    this.#notify();
  }

  /** Contender `who` got the lock; returns its entry number and the previous holder. */
  enter(who: number): { entry: number; previous: number | undefined } {
    const previous = this.#holder;
    this.#holder = who;
    this.entries++;
    this.#notify();
    return { entry: this.entries, previous };
  }

  /** Resolves once someone entered after `entry` (or the board closed). */
  untilEnteredAfter(entry: number): Promise<void> {
    return this.#until(() => this.entries > entry);
  }

  /** Resolves once `who` issued an acquire after entry `entry` happened (or the board closed). */
  untilIssuedSince(who: number, entry: number): Promise<void> {
    return this.#until(() => this.#issuedAt[who] >= entry);
  }

  /** Releases every waiter: the run is over. */
  close(): void {
    this.#closed = true;
    this.#notify();
  }

  #until(ready: () => boolean): Promise<void> {
    if (this.#closed || ready()) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ ready, resolve }));
  }

  #notify(): void {
    if (this.#waiters.length === 0) return;
    const still: Waiter[] = [];
    for (const w of this.#waiters) {
      if (this.#closed || w.ready()) w.resolve();
      else still.push(w);
    }
    this.#waiters = still;
  }
}
