import { ServerError } from "./server-error.js";

/**
 * The coordinator's session limit, held under concurrency: an Open reserves its slot before any
 * store work and gives the reservation back once the session is registered (or the Open failed),
 * so Opens in flight count against the limit too.
 */
export class SessionSlots {
  private reserved = 0;

  constructor(
    private readonly open: ReadonlyMap<string, unknown>,
    private readonly max: number,
  ) {}

  /** Sessions open plus Opens in flight. */
  get used(): number {
    return this.open.size + this.reserved;
  }

  /**
   * Reserves one slot, or throws `resource-exhausted` when none is free. Returns the function
   * that gives the reservation back (idempotent); call it once the session is registered or failed.
   */
  reserve(): () => void {
    if (this.used >= this.max) throw new ServerError("resource-exhausted", `coordinator: at most ${this.max} sessions`);
    this.reserved++;
    let held = true;
    return () => {
      if (held) this.reserved--;
      held = false;
    };
  }
}
