/** Messages in arrival order, taken one at a time; a taker waits (with a timeout) for the next. */
export class MessageInbox<T> {
  private readonly items: T[] = [];
  private wake?: () => void;

  push(item: T): void {
    this.items.push(item);
    this.wake?.();
  }

  /** The next message; rejects, naming `what`, when none arrives within `timeoutMs`. */
  async next(timeoutMs: number, what: string): Promise<T> {
    const giveUpAt = Date.now() + timeoutMs;
    while (this.items.length === 0) {
      const left = giveUpAt - Date.now();
      if (left <= 0) throw new Error(`no ${what} within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
    return this.items.shift()!;
  }
}
