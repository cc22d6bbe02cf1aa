import { EventWaiters } from "./event-waiters.js";

/** Messages in arrival order, taken one at a time; a taker waits (with a timeout) for the next. */
export class MessageInbox<T> {
  private readonly items: T[] = [];
  private readonly waiters = new EventWaiters();

  push(item: T): void {
    this.items.push(item);
    this.waiters.notify();
  }

  /** The next message; rejects, naming `what`, when none arrives within `timeoutMs`. */
  async next(timeoutMs: number, what: string): Promise<T> {
    const taken = await this.waiters.take(
      () => (this.items.length > 0 ? { item: this.items.shift() as T } : undefined),
      timeoutMs,
      () => `no ${what} within ${timeoutMs} ms`,
    );
    return taken.item;
  }
}
