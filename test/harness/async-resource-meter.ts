import { createHook } from "node:async_hooks";

/** Async resources created in a counted window, by async_hooks type, and where they were created. */
export interface AsyncResourceCount {
  /** How many of each type (PROMISE, TickObject, Immediate, Timeout, WRITEWRAP…). */
  byType: Record<string, number>;
  /** The creation sites of one type's resources, most frequent first (formatted only when asked: for failure messages). */
  origins(type: string, top?: number): string;
}

/** How long the process must create no async resource at all before it counts as quiet. */
const QUIET_WINDOW_MS = 20;
/** How long `quiet()` waits for that before it fails, naming what kept the process busy. */
const QUIET_TIMEOUT_MS = 15_000;
/** Creation stacks kept per window: enough to name what flooded a count. */
const MAX_STACKS = 5_000;

/**
 * Counts the async resources (promises, nextTicks, immediates, timers…) this process creates between
 * `begin()` and `stop()`, keeping each one's creation stack for failure messages. `quiet()` waits until
 * the process has stopped working on anything else, so that a count holds only the operation's work:
 * background work the tests do not own must be over first. (tsx sweeps its whole disk cache, shared by
 * every checkout on the machine, once a process transforms a file it had not cached: a `for await` over
 * thousands of entries, five promises each, interleaved with the tests for up to a second or two.)
 */
export class AsyncResourceMeter {
  /** Resources created since the hook was enabled (counted or not). */
  private created = 0;
  private window?: { byType: Map<string, number>; stacks: { type: string; error: Error }[] };
  private readonly hook = createHook({
    init: (_id, type) => {
      this.created++;
      const w = this.window;
      if (!w) return;
      w.byType.set(type, (w.byType.get(type) ?? 0) + 1);
      // The frames are captured now, formatted only if a failure message asks for them.
      if (w.stacks.length < MAX_STACKS) w.stacks.push({ type, error: new Error() });
    },
  });

  /** Starts watching the process. */
  enable(): void {
    this.hook.enable();
  }

  /** Stops watching. */
  disable(): void {
    this.hook.disable();
  }

  /**
   * Counts from now until the returned `stop()`. A begin/stop pair rather than a wrapper around the
   * operation, which would add its own await (a promise) to every count.
   */
  begin(): { stop(): AsyncResourceCount } {
    const window = { byType: new Map<string, number>(), stacks: [] as { type: string; error: Error }[] };
    this.window = window;
    return {
      stop: () => {
        if (this.window === window) this.window = undefined;
        return { byType: Object.fromEntries(window.byType), origins: (type, top) => origins(window.stacks, type, top) };
      },
    };
  }

  /**
   * Resolves once QUIET_WINDOW_MS pass in which the process creates no async resource and after which
   * no file-system request is in flight; rejects after QUIET_TIMEOUT_MS naming what kept it busy.
   */
  async quiet(): Promise<void> {
    const giveUpAt = Date.now() + QUIET_TIMEOUT_MS;
    for (;;) {
      const { created, fileRequests } = await this.quietWindow();
      if (created === 0 && !fileRequests) return;
      if (Date.now() > giveUpAt) {
        const counted = this.begin();
        await this.quietWindow();
        const busy = counted.stop();
        throw new Error(
          `the process did not go quiet in ${QUIET_TIMEOUT_MS / 1000} s before a count ` +
            `(file requests in flight: ${fileRequestsInFlight()}); what it created came from:\n` +
            Object.keys(busy.byType)
              .map((type) => `${type}:\n${busy.origins(type, 3)}`)
              .join("\n"),
        );
      }
    }
  }

  /** Waits QUIET_WINDOW_MS: how many async resources the process created meanwhile, and whether a file request is in flight. */
  private quietWindow(): Promise<{ created: number; fileRequests: boolean }> {
    return new Promise((resolve) => {
      let from = 0;
      setTimeout(
        () => resolve({ created: this.created - from, fileRequests: fileRequestsInFlight() }),
        QUIET_WINDOW_MS,
      );
      // Read once the caller's await has made its promise: a quiet window then counts 0.
      queueMicrotask(() => {
        from = this.created;
      });
    });
  }
}

/** True while a file-system request (a readdir, a write, an unlink) is in flight in this process. */
function fileRequestsInFlight(): boolean {
  return process.getActiveResourcesInfo().some((r) => r.startsWith("FSReq"));
}

/** The `top` most frequent creation sites of `type`'s resources: count, then the first frames outside node's internals. */
function origins(stacks: { type: string; error: Error }[], type: string, top = 5): string {
  const sites = new Map<string, number>();
  for (const s of stacks) {
    if (s.type !== type) continue;
    const frames = (s.error.stack ?? "")
      .split("\n")
      .slice(1)
      .filter((f) => !f.includes("node:internal/async_hooks") && !f.includes("async-resource-meter"))
      .slice(0, 4)
      .map((f) => f.trim());
    const site = frames.join(" ← ");
    sites.set(site, (sites.get(site) ?? 0) + 1);
  }
  return [...sites]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([site, n]) => `  ${n}× ${site}`)
    .join("\n");
}
