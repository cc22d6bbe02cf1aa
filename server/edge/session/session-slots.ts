import { ServerError } from "../../engine/server-error.js";

/**
 * The coordinator's session limit, held under concurrency: a stream takes its slot when its Open
 * arrives, before any store work, and gives it back when the stream ends (or its Open failed), so
 * Opens in flight count against the limit as much as open sessions do.
 */
export class SessionSlots {
  private taken = 0;

  constructor(private readonly max: number) {}

  /**
   * Takes one slot, or throws `resource-exhausted` when none is free. Returns the function that
   * gives it back (idempotent).
   */
  reserve(): () => void {
    if (this.taken >= this.max)
      throw new ServerError("resource-exhausted", `coordinator: at most ${this.max} sessions`);
    this.taken++;
    let held = true;
    return () => {
      if (held) this.taken--;
      held = false;
    };
  }
}
