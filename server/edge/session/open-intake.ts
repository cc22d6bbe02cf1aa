import { ServerError } from "../../engine/server-error.js";

/** Bounds on session streams before their Open is answered. */
export interface IntakeLimits {
  /** Streams that have not sent Open yet, per coordinator. */
  maxUnopenedStreams: number;
  /** Time a new stream has to send Open. */
  openTimeoutMs: number;
  /** Requests a client may send behind Open before Opened; the stream is paused meanwhile. */
  maxEarlyMessages: number;
}

/** One stream's place in the intake until it has sent Open; `leave` is idempotent. */
export interface IntakeTicket {
  /** The stream sent Open (or ended): it no longer counts, and its deadline is off. */
  leave(): void;
}

/**
 * Counts the session streams of one coordinator that have not sent Open yet and gives each a
 * deadline, so streams that never open cannot pile up: beyond `maxUnopenedStreams` a new stream
 * is refused RESOURCE_EXHAUSTED, and one silent past `openTimeoutMs` ends DEADLINE_EXCEEDED.
 */
export class OpenIntake {
  private unopened = 0;

  constructor(readonly limits: IntakeLimits) {}

  /** Streams waiting to send Open now. */
  get waiting(): number {
    return this.unopened;
  }

  /**
   * Admits a new stream; `onDeadline` runs if it has not left the intake in time. Throws
   * `resource-exhausted` when too many streams have not opened.
   */
  admit(onDeadline: (why: ServerError) => void): IntakeTicket {
    const { maxUnopenedStreams, openTimeoutMs } = this.limits;
    if (this.unopened >= maxUnopenedStreams)
      throw new ServerError(
        "resource-exhausted",
        `coordinator: more than ${maxUnopenedStreams} session streams have not sent open yet; retry later`,
      );
    this.unopened++;
    let left = false;
    const leave = () => {
      if (left) return;
      left = true;
      this.unopened--;
      clearTimeout(timer);
    };
    const timer = setTimeout(() => {
      leave();
      onDeadline(new ServerError("timeout", `session: open must be the first message, within ${openTimeoutMs} ms`));
    }, openTimeoutMs);
    return { leave };
  }
}
