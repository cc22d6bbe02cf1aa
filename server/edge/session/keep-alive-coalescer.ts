/**
 * A session's keepalives coalesce: one renewal runs at a time, and of those that arrive meanwhile
 * only the newest seq is renewed (and acknowledged) after it.
 */
export class KeepAliveCoalescer {
  private running = false;
  private next?: bigint;

  /** `renew` renews the lease once and acknowledges `seq` if it was renewed. */
  constructor(private readonly renew: (seq: bigint) => Promise<void>) {}

  /** Renews for `seq` now, or after the renewal running now (replacing any seq already waiting). */
  async push(seq: bigint): Promise<void> {
    if (this.running) {
      this.next = seq;
      return;
    }
    this.running = true;
    try {
      await this.renew(seq);
    } finally {
      this.running = false;
    }
    const next = this.next;
    this.next = undefined;
    if (next !== undefined) await this.push(next);
  }
}
