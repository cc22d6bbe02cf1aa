import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const CANDIDATE = fileURLToPath(new URL("./candidate-child.ts", import.meta.url));

/** One JSON line a child printed. */
export type ChildEvent = { event: string; atWallMs: number } & Record<string, unknown>;

/**
 * A child process that prints one JSON object per line, with every line it printed kept (so a
 * test never misses one printed before it started waiting) and a way to wait for a matching one.
 */
export class ChildEvents {
  readonly events: ChildEvent[] = [];
  private buffered = "";
  private waiters: (() => void)[] = [];

  constructor(readonly child: ChildProcess) {
    child.stdout?.on("data", (chunk: Buffer) => {
      this.buffered += chunk.toString();
      for (let nl = this.buffered.indexOf("\n"); nl >= 0; nl = this.buffered.indexOf("\n")) {
        const line = this.buffered.slice(0, nl);
        this.buffered = this.buffered.slice(nl + 1);
        if (line.startsWith("{")) this.events.push(JSON.parse(line));
      }
      for (const w of [...this.waiters]) w();
    });
    child.once("exit", () => {
      for (const w of [...this.waiters]) w();
    });
  }

  /** The first event named `event`, if printed yet. */
  find(event: string): ChildEvent | undefined {
    return this.events.find((e) => e.event === event);
  }

  /** Resolves with the first event named `event`; rejects after `timeoutMs` or if the child exits first. */
  next(event: string, timeoutMs = 10_000): Promise<ChildEvent> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== test);
        reject(new Error(`timed out waiting for "${event}"; printed: ${JSON.stringify(this.events)}`));
      }, timeoutMs);
      const test = () => {
        const found = this.find(event);
        const exited = this.child.exitCode !== null || this.child.signalCode !== null;
        if (!found && !exited) return false;
        clearTimeout(timer);
        this.waiters = this.waiters.filter((w) => w !== test);
        if (found) resolve(found);
        else reject(new Error(`child exited before "${event}"; printed: ${JSON.stringify(this.events)}`));
        return true;
      };
      if (!test()) this.waiters.push(test);
    });
  }

  /** Sends one command line on stdin. */
  command(line: string): void {
    this.child.stdin?.write(`${line}\n`);
  }

  /** SIGKILLs the child (if still running) and waits for it to exit. */
  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.kill("SIGKILL");
    await exited;
  }
}

/** Starts test/harness/candidate-child.ts campaigning for `name` on the coordinator at `address`. */
export function spawnCandidate(address: string, name: string, ttlMs: number, value: string): ChildEvents {
  const args = ["--import", "tsx", CANDIDATE, address, name, String(ttlMs), value];
  return new ChildEvents(spawn(process.execPath, args, { stdio: ["pipe", "pipe", "inherit"] }));
}
