/**
 * Counts mutual-exclusion violations as the clients see them: a contender marks itself holder when
 * its acquire resolves and clears the mark before it sends its release, so any overlap is a lock
 * granted to two contenders at once.
 */
export class ExclusionChecker {
  violations = 0;
  #holder: number | undefined;

  /** Contender `who` now believes it holds the lock. */
  enter(who: number): void {
    if (this.#holder !== undefined) this.violations++;
    this.#holder = who;
  }

  /** Contender `who` is about to release the lock. */
  leave(who: number): void {
    if (this.#holder === who) this.#holder = undefined;
  }
}
