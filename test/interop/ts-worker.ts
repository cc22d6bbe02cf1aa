import { writeSync } from "node:fs";
import { type Lock, LostLockError, type TlsOptions, TurnstileClient, TurnstileError } from "../../client/index.js";

/** One TypeScript interop worker: its own TurnstileClient (one session) and its rounds. */
export interface TsWorkerOptions {
  /** Coordinator addresses, tried in order; the session resumes on the next when one drains. */
  address: string | string[];
  name: string;
  lock: string;
  rounds: number;
  holdMs: number;
  waitMs: number;
  /** File descriptor of the shared log, opened with flag "a" (O_APPEND). */
  logFd: number;
  /** The client's TLS settings (the interop test runs over mTLS). */
  tls?: TlsOptions;
}

const RETRYABLE = new Set(["timeout", "busy", "unavailable", "lost"]);

/**
 * Runs `rounds` rounds of acquire → "enter <name> <token>" → hold → "exit <name> <token>" →
 * release, like the Go and Java examples. Each line goes out in one write(2) on an O_APPEND fd, and
 * only while the lock's signal has not aborted; a lock lost meanwhile logs "lost" and the round
 * is repeated. Resolves with how many times its session was resumed.
 */
export async function runTsWorker(options: TsWorkerOptions): Promise<{ resumes: number }> {
  const { address, name, lock: lockName, rounds, holdMs, waitMs, logFd, tls } = options;
  const append = (event: string, lock: Lock) => {
    const line = `${event} ${name} ${lock.fencingToken}\n`;
    if (writeSync(logFd, line) !== Buffer.byteLength(line)) throw new Error(`${name}: short write to the log`);
  };
  const client = new TurnstileClient(address, { clientName: name, tls });
  let resumes = 0;
  client.on("resumed", () => {
    resumes++;
  });
  try {
    for (let round = 1; round <= rounds; ) {
      let lock: Lock;
      try {
        lock = await client.acquire(lockName, { waitMs });
      } catch (error) {
        if (error instanceof TurnstileError && RETRYABLE.has(error.reason)) continue;
        throw error;
      }
      if (lock.signal.aborted) continue;
      append("enter", lock);
      await holdFor(holdMs, lock.signal);
      if (lock.signal.aborted) {
        append("lost", lock);
        if (lock.signal.reason instanceof LostLockError) continue;
        throw lock.signal.reason;
      }
      append("exit", lock);
      await lock.release();
      round++;
    }
    return { resumes };
  } finally {
    await client.close();
  }
}

/** Resolves after `ms` or as soon as `signal` aborts, whichever is first. */
function holdFor(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
